# Sourced by Benchmarks/http.sh and Benchmarks/reload.sh from the package root: installs the
# Debian packages named as arguments, builds menu-server and menu-bench for release, sets $bin to
# their directory and $work to a new temporary directory, and on exit stops every process whose id
# is in $pids and removes $work.
scripts/install-deps "$@"
# One product per command: given several --product flags, swift build builds only the last one.
swift build -c release --product menu-server >&2
swift build -c release --product menu-bench >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
