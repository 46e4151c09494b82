"""make upstream-check: the mails of upstream/ for mainline (Debian's
linux-source-7.3, the `mainline` variant's tree), proven as a maintainer
would take them.

1. The mails: numbered as one series after their cover letter, each
   signed off, applied in order by `git am` to the files they touch, as
   the pinned tree has them.
2. checkpatch.pl --strict of the 7.3 tree on each: no error, and no
   other finding than upstream/checkpatch-allowed.txt justifies;
   no name they define (function, macro, type) is used in 7.3 already.
3. get_maintainer.pl of the 7.3 tree gives the Cc list upstream/
   records (get_maintainer.txt), so docs/upstream.md's send-email line
   stays true.
4. Each kernel config of TARGETS builds with the mails (`mainline-fix`)
   with no warning that mainline's own build lacks.
5. The matrix of mainline and mainline-fix on TARGETS, with mainline's
   futex selftests (and the mails' new ones): mainline-fix must equal
   mainline except where patches/deviations-upstream.txt says, and every
   case that file names must fail on mainline (any mix for a "[race]")
   and pass on mainline-fix, on every target that builds it.
   UPSTREAM_MATRIX=DIR judges the run already in DIR instead (make
   check's: matrix-x86_64 runs mainline-fix beside mainline).
"""
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import compare, config, deps, kbuild, knobs, names, tables, tree
from .checkpatch import checkpatch
from .kselftest import selftest_mails
from .log import Fatal, progress
from .matrix import matrix_run
from .pipeline import build_kernel
from .targets import UPSTREAM, variant_tree
from .ktap import FAIL, PASS, SKIP

REFERENCE, FIXED = "mainline", "mainline-fix"
DEVIATIONS = "deviations-upstream.txt"
MAINTAINERS = config.UPSTREAM / "get_maintainer.txt"
# The checkpatch findings the mails may raise, each with its reason.
ALLOWED = config.UPSTREAM / "checkpatch-allowed.txt"
GET_MAINTAINER = ["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                  "--no-rolestats"]
# A mail's subject, which git format-patch folds onto lines that start
# with a space.
SUBJECT_RE = re.compile(r"^Subject: \[PATCH (\d+)/(\d+)\] (.*(?:\n .*)*)$", re.M)


def mails():
    """upstream/'s mails, the cover letter first; each (path, n, of, subject)."""
    found = []
    for path in sorted(config.UPSTREAM.glob("*.patch")):
        m = SUBJECT_RE.search(path.read_text(errors="replace"))
        if not m:
            raise Fatal("upstream/%s: no \"Subject: [PATCH n/m]\" line: not a git "
                        "format-patch mail of a series" % path.name)
        found.append((path, int(m.group(1)), int(m.group(2)), " ".join(m.group(3).split())))
    return found


def series_problems(found):
    """What is wrong with the mails as one series (numbering, sign-off)."""
    problems = []
    if not found:
        return ["upstream/ holds no mail"]
    count = len(found) - 1
    for i, (path, n, of, _subject) in enumerate(found):
        if (n, of) != (i, count):
            problems.append("%s is [PATCH %d/%d], expected [PATCH %d/%d]"
                            % (path.name, n, of, i, count))
        if i and "\nSigned-off-by: " not in path.read_text(errors="replace"):
            problems.append("%s has no Signed-off-by" % path.name)
    if found[0][0] in tree.extra_patches(UPSTREAM):
        problems.append("%s, [PATCH 0/%d], holds a diff: a cover letter holds none"
                        % (found[0][0].name, count))
    return problems


def git_am(pristine, patches):
    """Apply `patches` with git am to a repository of the files they touch,
    as `pristine` has them: "" or why not."""
    with tempfile.TemporaryDirectory(prefix="rfm-upstream-") as scratch:
        repo = Path(scratch)
        for name in sorted({f for p in patches for f in tree.touched_files(p)}):
            if (pristine / name).is_file():
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(pristine / name, repo / name)
        ident = ["-c", "user.name=rfm", "-c", "user.email=rfm@invalid.example"]
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "pristine"]):
            subprocess.run(["git"] + ident + cmd, cwd=repo, check=True, capture_output=True)
        r = subprocess.run(["git"] + ident + ["am", "--no-3way"] + [str(p) for p in patches],
                           cwd=repo, capture_output=True, text=True)
        return "" if r.returncode == 0 else (r.stdout + r.stderr)[-2000:]


FEATURE_TEST_MACRO = re.compile(r"_[A-Z0-9_]*(?:_SOURCE|_BITS)$")


def name_clashes(pristine, patches):
    """What the mails define (functions, macros, types) under a name the
    7.3 tree already uses elsewhere: ["name (mail): files"]. A name the
    file a mail changes already has is that file's own (a definition
    changed in place), not a clash."""
    new = {}
    for name, (kind, path, mail) in names.defined_names(
            (p.name, p.read_text(errors="replace")) for p in patches).items():
        if kind == "macro" and FEATURE_TEST_MACRO.match(name):
            continue        # the C library's to mean (_GNU_SOURCE), every program's to define
        own = pristine / path
        if not (own.is_file() and re.search(r"\b%s\b" % re.escape(name),
                                            own.read_text(errors="replace"))):
            new[name] = mail
    if not new:
        return []
    # One pass over the tree for all of them: file:name per use.
    r = subprocess.run(["grep", "-rowF", "--include=*.[chS]"]
                       + [a for n in sorted(new) for a in ("-e", n)] + ["."],
                       cwd=pristine, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise Fatal("grep in %s failed: %s" % (pristine, r.stderr[-500:]))
    users = {}
    for line in r.stdout.splitlines():
        path, _, name = line.rpartition(":")
        users.setdefault(name, set()).add(path[2:] if path.startswith("./") else path)
    return ["%s (%s): %s%s" % (name, new[name], ", ".join(sorted(users[name])[:5]),
                               " ..." if len(users[name]) > 5 else "")
            for name in sorted(new) if name in users]


def maintainers(pristine, patches):
    """get_maintainer.pl's Cc list for `patches`, one address per line,
    the people first, then the lists."""
    r = subprocess.run(GET_MAINTAINER + [str(p) for p in patches], cwd=pristine,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Fatal("get_maintainer.pl failed:\n%s" % r.stderr[-1500:])
    return r.stdout


def check_mails(pristine):
    """Steps 1 to 3: the rows of the mails' table and the failures."""
    found = mails()
    failures = series_problems(found)
    patches = [path for path, *_ in found[1:]]
    why = git_am(pristine, patches)
    if why:
        failures.append("git am: the mails do not apply to the pinned tree:\n" + why)
    allowed = dict(compare.load_rules(ALLOWED))
    selftests = selftest_mails()
    rows = []
    for path, n, of, subject in found:
        if n == 0:
            rows.append(["%d/%d" % (n, of), subject, "(cover letter)", "-", "-"])
            continue
        total, justified, refused, output = checkpatch(path, pristine, allowed)
        if refused:
            failures.append("checkpatch --strict on %s:\n%s" % (path.name, output))
        rows.append(["%d/%d" % (n, of), subject, total,
                     ", ".join("%s (allowed)" % t for t in justified) or "-",
                     "selftest" if path in selftests else "kernel"])
    failures += ["a name the mails define is used in 7.3 already: %s" % c
                 for c in name_clashes(pristine, patches)]
    got = maintainers(pristine, patches)
    recorded = MAINTAINERS.read_text() if MAINTAINERS.exists() else ""
    # Its order of equally placed entries varies from run to run (Perl's
    # hash order): the list is compared as a set.
    if sorted(got.splitlines()) != sorted(recorded.splitlines()):
        failures.append("get_maintainer.pl gives another Cc list than upstream/%s records "
                        "(the tree's MAINTAINERS, or the files the mails touch, changed): "
                        "record it again, and the send-email line of docs/upstream.md:\n%s"
                        % (MAINTAINERS.name, got))
    return rows, failures


def check_builds(targets):
    """Step 4: the rows of the builds' table and the failures."""
    rows, failures = [], []
    for kc in sorted({t.kconfig for t in targets}):
        known = kbuild.kernel_warnings(build_kernel(REFERENCE, kc, targets))
        mine = kbuild.kernel_warnings(build_kernel(FIXED, kc, targets))
        if known is None or mine is None:
            failures.append("%s: a cached kernel's build log is gone: its warnings are "
                            "unknown (make cache-key --prune, then again)" % kc)
            rows.append([kc, "unknown"])
            continue
        new = sorted(mine - known)
        failures += ["%s/%s: new warning: %s" % (FIXED, kc, w) for w in new]
        rows.append([kc, "%d new warning(s)" % len(new) if new else "no new warning"])
    return rows, failures


def fixed_cases(matrix):
    """Step 5's own verdict on each case deviations-upstream.txt names: the
    rows of its table and the failures."""
    rules = compare.load_rules(config.PATCHES / DEVIATIONS)
    kernels = matrix["kernels"]
    for k in (REFERENCE, FIXED):
        if not kernels.get(k, {}).get("available"):
            raise Fatal("the matrix has no %s run: %s" % (
                k, kernels.get(k, {}).get("reason", "not in its KERNELS")))
    rows_of = {k: {r["case"]: r for r in kernels[k]["cases"]} for k in (REFERENCE, FIXED)}
    rows, failures = [], []
    for glob, why in rules:
        cases = sorted(c for c, row in rows_of[REFERENCE].items()
                       if any(compare.deviation([(glob, why)], c, t) for t in row["cells"]))
        if not cases:
            failures.append("%s names %s, which the matrix does not have" % (DEVIATIONS, glob))
        race = why.startswith(compare.RACE)
        for case in cases:
            want = {REFERENCE: (FAIL, PASS) if race else (FAIL,), FIXED: (PASS,)}
            bad, seen = [], {}
            for k in (REFERENCE, FIXED):
                # The targets the line names (case@target), where the case is built.
                cells = rows_of[k].get(case, {}).get("cells", {})
                seen[k] = {t: c["status"] for t, c in cells.items()
                           if c["status"] != compare.NA
                           and compare.deviation([(glob, why)], case, t)}
            # Skipped by both kernels there: the guests lacked what it needs
            # (a second CPU), so the run says nothing of it either way.
            both_skipped = sorted(t for t, s in seen[REFERENCE].items()
                                  if s == SKIP and seen[FIXED].get(t) == SKIP)
            for k in (REFERENCE, FIXED):
                seen[k] = {t: s for t, s in seen[k].items() if t not in both_skipped}
                bad += ["%s on %s/%s" % (s, k, t) for t, s in seen[k].items()
                        if s not in want[k]]
            if not seen[FIXED] and not both_skipped:
                bad.append("not run on %s" % FIXED)
            if bad:
                failures.append("%s: %s" % (case, ", ".join(bad)))
            skipped = "skipped by both on %d target(s)" % len(both_skipped)
            rows.append([case, _summary(seen[REFERENCE]) or skipped,
                         _summary(seen[FIXED]) or skipped,
                         "FAIL" if bad else "ok" if seen[FIXED] else "not run"])
    return rows, failures


def _summary(statuses):
    """"FAIL on 8 targets", or each target's status when they differ; ""
    for none."""
    kinds = sorted(set(statuses.values()))
    if not kinds:
        return ""
    if len(kinds) == 1:
        return "%s on %d target(s)" % (kinds[0], len(statuses))
    return ", ".join("%s %s" % (t, s) for t, s in sorted(statuses.items()))


def cmd_upstream_check(_args):
    deps.ensure()
    targets = knobs.get("TARGETS")
    pristine = tree.pristine_tree(variant_tree(REFERENCE))
    progress("upstream", "the mails: git am, checkpatch --strict, get_maintainer.pl")
    mail_rows, failures = check_mails(pristine)
    print(tables.format_table(["mail", "subject", "checkpatch --strict (7.3)", "justified",
                               "touches"], mail_rows))
    build_rows, bad = check_builds(targets)
    failures += bad
    print(tables.format_table(["kernel config", "%s against %s" % (FIXED, REFERENCE)],
                              build_rows))
    reuse = knobs.get("UPSTREAM_MATRIX")
    if reuse:
        path = Path(reuse) / "matrix.json"
        if not path.is_file():
            raise Fatal("UPSTREAM_MATRIX=%s: no matrix.json there (make check's "
                        "matrix-x86_64 step writes it)" % reuse)
        matrix = json.loads(path.read_text())
        missing = [t.name for t in targets if t.name not in matrix["targets"]]
        if missing:
            raise Fatal("UPSTREAM_MATRIX=%s did not run on %s" % (reuse, ", ".join(missing)))
        status = matrix["summary"]["exit_status"]
        if status:
            failures.append("the matrix in %s is not green (exit %d)" % (reuse, status))
    else:
        out = config.out_dir()
        status = matrix_run((REFERENCE, FIXED), targets, None, out=out)
        if status:
            failures.append("the matrix of %s and %s is not green (exit %d): %s/matrix.txt"
                            % (REFERENCE, FIXED, status, out))
        matrix = json.loads((out / "matrix.json").read_text())
    case_rows, bad = fixed_cases(matrix)
    failures += bad
    print(tables.format_table(["case named by patches/" + DEVIATIONS, REFERENCE, FIXED,
                               "verdict"], case_rows))
    for f in failures:
        print("upstream-check: %s" % f)
    print("upstream-check: %s" % ("%d failure(s)" % len(failures) if failures else
                                  "the mails apply, are checkpatch clean, build with no new "
                                  "warning, and fix what deviations-upstream.txt names, "
                                  "changing nothing else, on %s"
                                  % ", ".join(t.name for t in targets)))
    return 1 if failures else 0
