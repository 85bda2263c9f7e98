"""scripts/harness/crash-test's own modules: the loop-mounted file systems it cuts and its corpus (filesystem), a
cut's scenario and what it must leave (scenario)."""
