"""scripts/harness/hostile-test's own modules: the hostile states (cases), what they share (common), the
hinted sizes of gzip and lz4 members (hinted_sizes) and the shared test vectors as hostile files (vectors)."""
