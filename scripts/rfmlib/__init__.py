"""robust-futex-matrix: build, boot and compare the robust-futex matrix."""
