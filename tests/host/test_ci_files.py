"""The CI definitions (.gitlab-ci.yml, .github/workflows/matrix.yml) against
the one target table: a shard job per target, the kernels every target
boots, a merge of every shard, the kernel cache keyed by `rfm cache-key`.
A target added to scripts/rfmlib/targets.py and forgotten here fails."""
import re
import unittest

from rfmlib import config, mutate, steps
from rfmlib.knobs import BY_NAME as KNOBS
from rfmlib.targets import ARCH_GROUPS as TABLE_ARCH_GROUPS, TARGETS
from tests.host import util

# What make matrix-check boots when KERNELS is unset (the knob table's).
CHECK_KERNELS = dict(KNOBS["KERNELS"].per_command)["matrix-check"].split(",")

GITLAB = config.REPO / ".gitlab-ci.yml"
GITHUB = config.REPO / ".github" / "workflows" / "matrix.yml"
GITHUB_BISECT = config.REPO / ".github" / "workflows" / "bisect.yml"
# The architecture groups bisect-check splits into, one runner each.
ARCH_GROUPS = sorted(TABLE_ARCH_GROUPS)
# The matrix's shards: every target of a group (the others, x86_64-la57,
# run in the distro job, which names them).
TABLE = [t.name for t in TARGETS if t.grouped]
UNGROUPED = [t.name for t in TARGETS if not t.grouped]
KCONFIG_OF = {t.name: t.kconfig for t in TARGETS}
# Top-level keys of a GitLab file that are not jobs.
GITLAB_GLOBAL = {"stages", "variables", "default", "workflow", "include", "image",
                 "services", "cache", "before_script", "after_script"}


def load(path):
    return util.debian_module("yaml").safe_load(path.read_text())


def split(spec):
    return [s for s in str(spec).replace(",", " ").split() if s]


def gitlab_jobs():
    """{name: job} of the GitLab file, `extends` applied (variables merged)."""
    doc = load(GITLAB)

    def resolved(name):
        job = dict(doc[name])
        parents = job.pop("extends", [])
        merged = {}
        for parent in [parents] if isinstance(parents, str) else parents:
            merged.update(resolved(parent))
        variables = dict(merged.get("variables", {}), **job.get("variables", {}))
        merged.update(job)
        merged["variables"] = variables
        return merged

    return doc, {n: resolved(n) for n in doc
                 if n not in GITLAB_GLOBAL and not n.startswith(".")}


def script_text(job):
    return "\n".join(job.get("script", []))


def steps_text(job):
    return "\n".join(str(s.get("run", "")) + str(s.get("uses", "")) + str(s.get("with", ""))
                     for s in job["steps"])


class GitLab(unittest.TestCase):
    def setUp(self):
        self.doc, self.jobs = gitlab_jobs()
        self.by_stage = {}
        for name, job in self.jobs.items():
            self.by_stage.setdefault(job.get("stage"), {})[name] = job

    def test_a_shard_job_per_target_of_the_table(self):
        shards = [split(j["variables"].get("TARGETS")) for j in self.by_stage["shards"].values()]
        self.assertTrue(all(len(s) == 1 for s in shards), shards)
        got = [s[0] for s in shards]
        self.assertEqual(sorted(got), sorted(TABLE),
                         "%s: one shard job per target in targets.TARGETS" % GITLAB.name)

    def test_each_shard_has_its_own_output_directory(self):
        outs = [j["variables"]["RFM_OUT"] for j in self.by_stage["shards"].values()]
        self.assertTrue(all("$TARGETS" in o for o in outs), outs)
        self.assertTrue(all("matrix-check" in script_text(j)
                            for j in self.by_stage["shards"].values()))

    def test_kernel_jobs_build_every_kernel_each_target_boots(self):
        self.assertEqual(split(self.doc["variables"]["KERNELS"]), CHECK_KERNELS)
        kernel_jobs = self.by_stage["kernels"]
        built = {}
        for name, job in kernel_jobs.items():
            targets = split(job["variables"]["TARGETS"])
            kconfigs = {KCONFIG_OF[t] for t in targets}
            self.assertEqual(len(kconfigs), 1, "%s builds one kernel config" % name)
            (variants,) = job["parallel"]["matrix"]
            self.assertEqual(variants["KERNELS"], CHECK_KERNELS, name)
            for t in targets:
                built[t] = name
        self.assertEqual(sorted(built), sorted(TABLE))
        for name, job in self.by_stage["shards"].items():
            (target,) = split(job["variables"]["TARGETS"])
            self.assertIn(built[target], job["needs"], "%s needs its kernels" % name)

    def test_kernel_cache_is_pruned_to_the_cache_key(self):
        for name, job in self.by_stage["kernels"].items():
            self.assertEqual(job["cache"]["paths"], ["rfm-cache/kernels/"], name)
            self.assertEqual(self.doc["variables"]["RFM_CACHE"], "rfm-cache")
            self.assertIn("$(python3 scripts/rfm cache-key)", script_text(job))
            self.assertIn("rfm cache-key --prune", script_text(job))
            self.assertEqual(job["artifacts"]["paths"], ["rfm-cache/kernels/"])

    def test_the_merge_needs_every_shard_and_publishes_junit(self):
        (merge,) = self.by_stage["merge"].values()
        self.assertEqual(sorted(merge["needs"]), sorted(self.by_stage["shards"]))
        self.assertEqual(merge["when"], "always")
        # Every shard of the table is expected, not just the default x86.
        self.assertIn("TARGETS=all RESULTS=\"$(echo out/shard-*)\" RFM_OUT=out/matrix python3 "
                      "scripts/rfm merge", script_text(merge))
        self.assertEqual(merge["artifacts"]["reports"]["junit"], "out/matrix/junit.xml")
        for job in self.by_stage["shards"].values():
            self.assertEqual(job["artifacts"]["when"], "always")


class GitHub(unittest.TestCase):
    def setUp(self):
        self.doc = load(GITHUB)
        self.jobs = self.doc["jobs"]

    def test_a_shard_job_per_target_of_the_table(self):
        got = self.jobs["shard"]["strategy"]["matrix"]["target"]
        self.assertEqual(sorted(got), sorted(TABLE),
                         "%s: one shard per target in targets.TARGETS" % GITHUB.name)
        self.assertEqual(self.jobs["shard"]["env"]["RFM_OUT"], "out/shard-${{ matrix.target }}")
        self.assertIn("rfm matrix-check", steps_text(self.jobs["shard"]))

    def test_kernel_jobs_build_every_kernel_each_target_boots(self):
        self.assertEqual(split(self.doc["env"]["KERNELS"]), CHECK_KERNELS)
        matrix = self.jobs["kernels"]["strategy"]["matrix"]
        self.assertEqual(matrix["kernel"], CHECK_KERNELS)
        built = []
        for row in matrix["config"]:
            targets = split(row["targets"])
            self.assertEqual({KCONFIG_OF[t] for t in targets}, {row["name"]})
            built += targets
        self.assertEqual(sorted(built), sorted(TABLE))
        self.assertEqual(self.jobs["shard"]["needs"], "kernels")

    def test_kernel_cache_is_keyed_by_cache_key(self):
        steps = self.jobs["kernels"]["steps"]
        (key,) = [s for s in steps if s.get("id") == "key"]
        self.assertIn("$(python3 scripts/rfm cache-key)", key["run"])
        (cache,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
        self.assertIn("${{ steps.key.outputs.key }}", cache["with"]["key"])
        self.assertEqual(cache["with"]["path"], "rfm-cache/kernels")
        self.assertEqual(self.doc["env"]["RFM_CACHE"], "rfm-cache")
        self.assertLess(steps.index(key), steps.index(cache))

    def test_the_merge_needs_every_shard_and_publishes_the_matrix(self):
        merge = self.jobs["merge"]
        self.assertEqual((merge["needs"], merge["if"]), ("shard", "${{ !cancelled() }}"))
        text = steps_text(merge)
        # Every shard of the table is expected, not just the default x86.
        self.assertIn("TARGETS=all RESULTS=\"$(echo out/shard-*)\" RFM_OUT=out/matrix python3 "
                      "scripts/rfm merge", text)
        self.assertIn("'path': 'out/matrix/'", text)
        uploads = [s for s in self.jobs["shard"]["steps"]
                   if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
        self.assertEqual([(s["if"], s["with"]["path"]) for s in uploads],
                         [("${{ !cancelled() }}", "out/")])


class Bisect(unittest.TestCase):
    """bisect-check in CI: a job per architecture group, together every
    kernel config bisect-check builds, run when the series changes."""

    def test_gitlab_has_a_bisect_job_per_architecture(self):
        _, jobs = gitlab_jobs()
        bisect = {n: j for n, j in jobs.items() if j.get("stage") == "bisect"}
        self.assertEqual(sorted(j["variables"]["TARGETS"] for j in bisect.values()),
                         ARCH_GROUPS)
        for job in bisect.values():
            self.assertIn("rfm bisect-check", script_text(job))
            self.assertEqual(job["rules"], [{"changes": ["patches/**/*"]}])

    def test_github_has_a_bisect_job_per_architecture(self):
        doc = load(GITHUB_BISECT)
        job = doc["jobs"]["bisect"]
        self.assertEqual(sorted(job["strategy"]["matrix"]["arch"]), ARCH_GROUPS)
        self.assertEqual(job["env"]["TARGETS"], "${{ matrix.arch }}")
        self.assertIn("rfm bisect-check", steps_text(job))
        on = doc.get("on", doc.get(True))     # YAML 1.1 reads a bare `on` as true
        self.assertEqual(on["push"]["paths"], ["patches/**"])

    def test_the_groups_cover_every_bisect_config(self):
        from rfmlib import targets
        built = {kc for g in ARCH_GROUPS
                 for kc in targets.bisect_configs(targets.select_targets(g))}
        self.assertEqual(built, set(targets.BISECT_CONFIGS))


class Distro(unittest.TestCase):
    """make distro-check in CI: on both, run when the series or the
    distro config changes, with the targets no group holds."""

    def test_gitlab_runs_it_when_the_series_changes(self):
        _, jobs = gitlab_jobs()
        job = jobs["distro:x86"]
        self.assertIn("make distro-check", script_text(job))
        self.assertEqual(job["rules"], [{"changes": ["patches/**/*", "kconfig/distro.config"]}])

    def test_github_runs_it_when_the_series_changes(self):
        doc = load(config.REPO / ".github" / "workflows" / "distro.yml")
        self.assertIn("make distro-check", steps_text(doc["jobs"]["distro"]))
        on = doc.get("on", doc.get(True))
        self.assertEqual(on["push"]["paths"], ["patches/**", "kconfig/distro.config"])

    def test_it_boots_the_targets_no_group_holds(self):
        make = (config.REPO / "Makefile").read_text()
        line = [l for l in make.splitlines() if "KERNELS=distro,distro-stock" in l][0]
        self.assertIn("x86_64-la57", line)
        # Every target in no group is named by some command of the Makefile.
        commands = [l for l in make.splitlines() if l.startswith("\t") and "TARGETS=" in l]
        for name in UNGROUPED:
            self.assertTrue(any(name in l for l in commands), name)


class Scheduled(unittest.TestCase):
    """CI's schedule is the table of steps.SCHEDULE: each CI file runs a
    job per job of it, by name, and .ci/run the one whose turn it is."""
    SCHEDULE = [j.name for j in steps.SCHEDULE if j.rotates]

    def test_gitlab_runs_each_job_of_the_table_on_schedules_only(self):
        _, jobs = gitlab_jobs()
        job = jobs["schedule"]
        self.assertEqual(job["rules"], [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}])
        self.assertEqual(job["parallel"]["matrix"], [{"JOB": self.SCHEDULE}])
        self.assertEqual(job["script"], ["make check-all"])
        merge = jobs["schedule-merge"]
        self.assertEqual(merge["variables"]["JOB"], "merge-all")
        self.assertEqual(merge["needs"], ["schedule"])
        self.assertEqual(merge["script"], ["make check-all"])
        # No other job runs on schedules only: the table is the schedule.
        self.assertEqual({n for n, j in jobs.items() if j.get("rules", [{}])[0].get("if") ==
                          '$CI_PIPELINE_SOURCE == "schedule"'}, {"schedule", "schedule-merge"})

    def test_github_runs_each_job_of_the_table_weekly(self):
        doc = load(config.REPO / ".github" / "workflows" / "scheduled.yml")
        on = doc.get("on", doc.get(True))
        self.assertTrue(on["schedule"][0]["cron"])
        self.assertEqual(set(doc["jobs"]), {"schedule", "merge"})
        job = doc["jobs"]["schedule"]
        self.assertEqual(job["strategy"]["matrix"], {"job": self.SCHEDULE})
        self.assertIn("make check-all JOB=${{ matrix.job }}", steps_text(job))
        self.assertIn("make check-all JOB=merge-all", steps_text(doc["jobs"]["merge"]))

    def test_the_merge_is_the_one_job_that_does_not_rotate(self):
        self.assertEqual([j.name for j in steps.SCHEDULE if not j.rotates], ["merge-all"])
        self.assertEqual(steps.SCHEDULE[-1].name, "merge-all")

    def test_ci_run_runs_make_check_then_the_next_job(self):
        text = (config.REPO / ".ci" / "run").read_text()
        self.assertIn('export CI_STARTED="${CI_STARTED:-$(date +%s)}"', text)
        commands = [l for l in text.splitlines() if l.startswith("make ")]
        self.assertEqual(commands, ["make deps", "make check", "make check-next"])

    def test_every_catalogue_kept_in_the_tree_runs_on_the_schedule(self):
        run = set()
        for j in steps.SCHEDULE:
            for s in j.steps:
                if s.command in ("mutate", "mutate-gen"):
                    run.add((s.command, s.setting("MUTANTS") or "tests/mutants"))
        for d in mutate.CATALOGUES:
            self.assertIn(("mutate", d), run, d)
        self.assertIn(("mutate-gen", "tests/mutants"), run)

    def test_the_parts_of_a_catalogue_are_all_there(self):
        parts = {}
        for j in steps.SCHEDULE:
            for s in j.steps:
                shard = s.setting("MUTANT_SHARD")
                if shard:
                    k, n = shard.split("/")
                    key = (s.command, s.setting("MUTANTS"), int(n))
                    parts.setdefault(key, []).append(int(k))
        self.assertTrue(parts)
        for (command, catalogue, n), ks in parts.items():
            self.assertEqual(sorted(ks), list(range(1, n + 1)), (command, catalogue))


if __name__ == "__main__":
    unittest.main()


class CheckSteps(unittest.TestCase):
    """make check's steps (steps.py) each have a make target of their own,
    and make check is the runner, not a list kept twice."""

    def targets(self):
        """{make target: its recipe lines}."""
        found, current = {}, None
        for line in (config.REPO / "Makefile").read_text().splitlines():
            m = re.match(r"^([\w.-]+):", line)
            if m:
                current = found.setdefault(m.group(1), [])
            elif line.startswith("\t") and current is not None:
                current.append(line.strip().lstrip("@"))
        return found

    def test_every_step_with_settings_runs_from_its_table(self):
        make = self.targets()
        for table in ("check", "check-arm"):
            rows = steps.TABLES[table]
            for s in rows:
                if not s.settings and not s.args:
                    continue    # the plain command: make abi, make deps, ...
                self.assertIn(s.name, make, "make %s" % s.name)
                self.assertEqual(make[s.name], ["$(RFM) %s --step %s" % (table, s.name)],
                                 s.name)

    def test_make_check_is_the_runner(self):
        make = self.targets()
        self.assertEqual(make["check"], ["$(RFM) check"])
        self.assertEqual(make["check-arm"], ["$(RFM) check-arm"])
