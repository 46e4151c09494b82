"""names.py: no name the series defines means something else in mainline."""
import unittest

from rfmlib import names, tree

MAINLINE = ("get_user_inline\tmacro\tinclude/linux/uaccess.h\tinline get_user, value untouched on fault\n"
            "fetch_robust_entry\tfunction\tkernel/futex/core.c\tread a link\n")


def patch(path, *lines):
    return "--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n%s\n" % (
        path, path, "\n".join("+" + line for line in lines))


class Definitions(unittest.TestCase):
    def test_what_counts_as_a_definition(self):
        text = patch("include/linux/uaccess.h", "#define get_user_nocall(x, ptr) \\",
                     "static inline int helper(int a)", "int declared_only(void);",
                     "struct thing {", "\tcall_inside(1);",
                     "SYSCALL_DEFINE2(set_robust_list, struct robust_list_head __user *, head,")
        self.assertEqual(sorted(names.defined_names([("0009", text)])),
                         ["get_user_nocall", "helper", "thing"])

    def test_documentation_and_removed_lines_define_nothing(self):
        text = ("--- a/Documentation/x.rst\n+++ b/Documentation/x.rst\n+#define doc_only 1\n"
                + patch("kernel/futex/core.c", "x").replace("+x", "-#define removed 1"))
        self.assertEqual(names.defined_names([("p", text)]), {})


class Clashes(unittest.TestCase):
    def problems(self, text, shared=""):
        return names.problems(names.defined_names([("0009", text)]),
                              names.load_mainline(MAINLINE), names.load_shared(shared))

    def test_a_mainline_name_with_another_meaning_fails(self):
        found = self.problems(patch("include/linux/uaccess.h", "#define get_user_inline(x, ptr) \\"))
        self.assertEqual(len(found), 1)
        self.assertIn("get_user_inline (macro in include/linux/uaccess.h, 0009) is a "
                      "mainline name", found[0])

    def test_a_shared_name_needs_its_reason_and_must_exist(self):
        text = patch("kernel/futex/robust.c", "static int fetch_robust_entry(void)")
        self.assertEqual(self.problems(text, "fetch_robust_entry\tstock's helper\n"), [])
        self.assertIn("which the series does not define",
                      self.problems("", "fetch_robust_entry\tstock's helper\n")[0])
        with self.assertRaisesRegex(Exception, "has no reason"):
            names.load_shared("fetch_robust_entry\n")

    def test_the_series_is_clean(self):
        self.assertEqual(names.check(tree.read_series()), [])
