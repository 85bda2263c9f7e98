"""scripts/harness/fault-test's own modules: faultfs, the FUSE file system that fails chosen calls (faultfs.c, driven
by faultfs), the files and modes of a case (cases), what its outcome must be (checks), the resume cases (resume)
and the inputs whose size the hooked build trusts (hooked)."""
