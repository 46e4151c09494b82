"""mutgen.py: mechanical mutants of the series' added lines."""
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from rfmlib import mutate, mutgen

BEFORE = """\
int f(int a)
{
	return a;
}
"""

AFTER = """\
/* a comment with == and < that no operator may touch */
int f(int a)
{
	if (a != 0 && a < 8)	/* tail comment: a > b */
		return -EFAULT;
	p = find_task_by_vpid(pid);
	x = y->next;
	printf("a == b");
	return a;
}
"""


def ops(line):
    """{operator: mutated line} of one code line."""
    return {op if nth == 1 else "%s-%d" % (op, nth): new
            for op, nth, new in mutgen.mutate_line(line, line)}


class Lines(unittest.TestCase):
    def test_only_added_code_lines_are_mutated(self):
        found = mutgen.generate("kernel/futex/robust.c", BEFORE, AFTER)
        self.assertEqual(sorted({g.line for g in found}), [4, 5, 6, 8])
        self.assertEqual(mutgen.added_lines(BEFORE, AFTER), {1, 4, 5, 6, 7, 8})

    def test_comments_and_strings_are_blanked(self):
        code = mutgen.code_lines(AFTER)
        self.assertNotIn(1, code)
        self.assertNotIn(">", code[4])
        self.assertNotIn("==", code[8])
        self.assertIn("if (a != 0 && a < 8)", code[4])

    def test_names_are_stable_unique_and_say_where_and_what(self):
        a = mutgen.generate("kernel/futex/robust.c", BEFORE, AFTER)
        b = mutgen.generate("kernel/futex/robust.c", BEFORE, AFTER)
        self.assertEqual([g.name for g in a], [g.name for g in b])
        self.assertEqual(len({g.name for g in a}), len(a))
        self.assertIn("g-robust-c-4-ne-to-eq", [g.name for g in a])
        self.assertIn("g-robust-c-4-literal-plus-one-2", [g.name for g in a])


class Operators(unittest.TestCase):
    def test_relations_logic_and_literals(self):
        got = ops("\tif (a != 0 && a < 8)")
        self.assertEqual(got["ne-to-eq"], "\tif (a == 0 && a < 8)")
        self.assertEqual(got["and-to-or"], "\tif (a != 0 || a < 8)")
        self.assertEqual(got["lt-to-le"], "\tif (a != 0 && a <= 8)")
        self.assertEqual(got["literal-plus-one-2"], "\tif (a != 0 && a < 9)")
        self.assertEqual(got["literal-minus-one"], "\tif (a != 0 && a < 7)")

    def test_arrows_and_shifts_are_no_comparisons(self):
        got = ops("\tx = y->next << 2 >> 1;")
        self.assertNotIn("gt-to-ge", got)
        self.assertNotIn("lt-to-le", got)

    def test_statements_dropped_whole(self):
        self.assertEqual(ops("\t\treturn -EFAULT;")["statement-dropped"], "\t\t;")
        self.assertEqual(ops("\tbreak;")["statement-dropped"], "\t;")
        self.assertEqual(ops("\tfutex_wake(uaddr, 1);")["statement-dropped"], "\t;")
        self.assertNotIn("statement-dropped", ops("\tint x = 1;"))

    def test_conditions_forced_and_operands_dropped(self):
        got = ops("\tif (head && pop == slot)")
        self.assertEqual(got["if-always"], "\tif ((head && pop == slot) || 1)")
        self.assertNotIn("if-never", got)       # one statement: statement-dropped's
        self.assertEqual(got["condition-dropped"], "\tif (pop == slot)")
        self.assertEqual(got["condition-dropped-2"], "\tif (head)")
        got = ops("\twhile (a || (b && c)) {")
        self.assertEqual(got["if-never"], "\twhile ((a || (b && c)) && 0) {")
        self.assertEqual(got["condition-dropped"], "\twhile ((b && c)) {")
        self.assertEqual(got["condition-dropped-2"], "\twhile (a) {")
        self.assertNotIn("condition-dropped-3", got)
        self.assertNotIn("if-always", ops("\tif (a &&"))     # the condition goes on

    def test_user_access_unchecked_and_arguments_zeroed(self):
        got = ops("\tif (put_user(0U, pop))")
        self.assertEqual(got["put-user-unchecked"], "\tif (__put_user(0U, pop))")
        # a 0 for a user-access macro's lvalue, pointer or label does not build
        self.assertNotIn("arg-to-zero", got)
        self.assertNotIn("arg-to-zero", ops("\tunsafe_get_user(v, p, efault);"))
        self.assertNotIn("put-user-unchecked", ops("\tif (__put_user(0U, pop))"))
        got = ops("\tret = futex_wake(uaddr, flags, NULL, val);")
        self.assertEqual(got["arg-to-zero"], "\tret = futex_wake(0, flags, NULL, val);")
        self.assertEqual(got["arg-to-zero-3"], "\tret = futex_wake(uaddr, flags, NULL, 0);")
        self.assertNotIn("arg-to-zero-4", got)      # NULL is left alone
        self.assertEqual(ops("\t\tgoto out;")["statement-dropped"], "\t\t;")

    def test_moved_statements_and_returns_kept_as_assignments(self):
        before = "int f(void)\n{\n}\n"
        after = ("int f(int *p)\n{\n\tint ret;\n\n\tx = *p;\n\tput(x);\n"
                 "\ty = 1;\n\tif (x)\n\t\treturn -EFAULT;\n\treturn ret;\n}\n")
        found = {g.name: g for g in mutgen.generate("kernel/futex/pi.c", before, after)}
        moved = found["g-pi-c-5-statement-moved-down"]
        self.assertEqual((moved.span, moved.after), (2, "\tput(x);\n\tx = *p;"))
        self.assertNotIn("g-pi-c-6-statement-moved-down", found)    # put(x), y: no name shared
        self.assertEqual(found["g-pi-c-9-return-kept-as-assignment"].after, "\t\tret = -EFAULT;")
        self.assertNotIn("g-pi-c-10-return-kept-as-assignment", found)     # the last one
        self.assertNotIn("g-pi-c-6-statement-moved-down", found)
        self.assertEqual(moved.pin, mutgen.pin_of(after.splitlines(), 6))   # both lines
        pointer = after.replace("int f(int *p)", "struct task *f(int *p)")
        self.assertNotIn("g-pi-c-9-return-kept-as-assignment",
                         {g.name for g in mutgen.generate("kernel/futex/pi.c", before, pointer)})
        # two stores that share only what they read stay in their order
        self.assertFalse(mutgen.dependent("\t*entry = compat_ptr(u & ~1U);", "\t*pi = u & 1;"))
        self.assertTrue(mutgen.dependent("\tf(tsk);", "\ttsk->list = NULL;"))
        text = mutgen.patch_text(moved, after)
        self.assertIn("-\tx = *p;\n-\tput(x);\n+\tput(x);\n+\tx = *p;\n", text)
        self.assertIn("@@ -2,8 +2,8 @@", text)

    def test_domain_operators(self):
        self.assertEqual(ops("\tp = find_task_by_vpid(pid);")["vpid-to-init-ns"],
                         "\tp = find_task_by_pid_ns(pid, &init_pid_ns);")
        self.assertEqual(ops("\tp = current;")["current-to-leader"],
                         "\tp = current->group_leader;")
        self.assertNotIn("current-to-leader", ops("\tp = current->group_leader;"))
        self.assertEqual(
            ops("\tif (!ptrace_may_access(p, PTRACE_MODE_READ_REALCREDS))")["realcreds-to-fscreds"],
            "\tif (!ptrace_may_access(p, PTRACE_MODE_READ_FSCREDS))")
        self.assertEqual(ops("\tu32 uval;")["u32-to-ulong"], "\tunsigned long uval;")
        self.assertEqual(ops("\tm = uval & FUTEX_WAITERS;")["waiters-to-owner-died"],
                         "\tm = uval & FUTEX_OWNER_DIED;")
        self.assertEqual(ops("\t*entry = (void *)(uentry & ~1UL);")["pi-bit-mask-dropped"],
                         "\t*entry = (void *)(uentry & ~0UL);")
        self.assertEqual(ops("\tf(a, b);")["args-swapped"], "\tf(b, a);")

    def test_declarations_and_preprocessor_are_left_alone(self):
        self.assertEqual(ops("#define LIMIT 2048"), {})
        self.assertEqual(ops("static_assert(sizeof(struct robust_list) == sizeof(long));"), {})
        self.assertEqual(ops("static int futex_handle_death(u32 __user *uaddr, pid_t tid,"), {})


class Patches(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rfm-mutgen-"))
        self.addCleanup(shutil.rmtree, self.dir)

    def test_each_patch_applies_exactly_and_changes_one_line(self):
        path = "kernel/futex/robust.c"
        (self.dir / "kernel/futex").mkdir(parents=True)
        for g in mutgen.generate(path, BEFORE, AFTER):
            (self.dir / path).write_text(AFTER)
            p = self.dir / (g.name + ".patch")
            p.write_text(mutgen.patch_text(g, AFTER))
            r = subprocess.run(["patch", "-p1", "--fuzz=0", "-d", str(self.dir), "-i", str(p)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertNotIn("offset", r.stdout)
            new = (self.dir / path).read_text().splitlines()
            changed = [i for i, (x, y) in enumerate(zip(AFTER.splitlines(), new), 1) if x != y]
            self.assertEqual(changed, [g.line], g.name)
            m = mutate.parse_header(p)
            self.assertEqual((m.generated, m.expect), (g.operator, ()))

    def test_a_fixed_sample(self):
        names = ["g-a-%d-eq-to-ne" % n for n in range(40)]
        self.assertEqual(mutgen.sample(names, 5), mutgen.sample(list(reversed(names)), 5))
        self.assertEqual(len(mutgen.sample(names, 5)), 5)
        self.assertTrue(set(mutgen.sample(names, 5)) <= set(names))

    def test_the_equivalence_list(self):
        self.assertEqual(mutgen.read_equivalents("# c\ng-x-1-op @0123abcd: needs two CPUs\n\n"),
                         {"g-x-1-op": ("0123abcd", "needs two CPUs")})
        with self.assertRaisesRegex(ValueError, "NAME @PIN"):
            mutgen.read_equivalents("g-x-1-op: no pin\n")

    def test_an_equivalent_is_pinned_to_its_code_not_its_line_number(self):
        found = {g.name: g for g in mutgen.generate("kernel/futex/robust.c", BEFORE, AFTER)}
        name = "g-robust-c-8-statement-dropped"
        pinned = {name: (found[name].pin, "why")}
        self.assertEqual(mutgen.unpinned(pinned, found), [])
        # A line added above moves another statement under line 8.
        shifted = AFTER.replace("\tx = y->next;\n", "\tx = y->next;\n\tfoo();\n")
        moved = {g.name: g for g in mutgen.generate("kernel/futex/robust.c", BEFORE, shifted)}
        self.assertEqual(moved[name].before, "\tfoo();")
        self.assertRegex(mutgen.unpinned(pinned, moved)[0],
                         r"^g-robust-c-8-statement-dropped: judged at @\w+, now @\w+, "
                         r"kernel/futex/robust.c:8: foo\(\);$")
        self.assertEqual(mutgen.unpinned(pinned, {}),
                         [name + ": the series no longer generates it"])


class Score(unittest.TestCase):
    def test_an_unbuildable_mutant_is_counted_apart(self):
        m = mutate.Mutant("g", Path("g.patch"), "r", generated="eq-to-ne")
        k = mutate.Mutant("k", Path("k.patch"), "r", expect=("x",))
        outcomes = [mutate.Outcome(m, mutate.UNBUILDABLE), mutate.Outcome(k, "killed")]
        self.assertEqual(mutate.score(outcomes), (1, 1))
        self.assertFalse(mutate.failed(outcomes[0]))
        self.assertIn("1 not built (counted apart)", mutate.render(outcomes, "c", 1))


if __name__ == "__main__":
    unittest.main()
