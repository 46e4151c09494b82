"""Host-side unit tests: the KTAP parser, the comparer, the reports and
the build helpers, run without booting anything (`make host-test`)."""
