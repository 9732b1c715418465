# contrib/: scripts for users and developers (installers, benchmarks, flows).
EXTRA_DIST += contrib/install-deps.sh
EXTRA_DIST += contrib/fuzz.sh
