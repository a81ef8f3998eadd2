# Sourced by Benchmarks/http.sh and Benchmarks/reload.sh from the package root: installs the
# Debian packages named as arguments, builds menu-server and menu-bench for release, sets $bin to
# their directory and $work to a new temporary directory, and on exit stops every process whose id
# is in $pids and removes $work. Defines wait_for_url.
scripts/install-deps "$@"
# One product per command: given several --product flags, swift build builds only the last one.
swift build -c release --product menu-server >&2
swift build -c release --product menu-bench >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
# Waits (60 s at most) for the server whose id is $1, writing to the files after it, to log the
# address it listens on; sets $url to it, or exits 1 with the server's errors.
wait_for_url() {
    local pid=$1
    shift
    url=
    for _ in $(seq 600); do
        url=$(sed -n 's|.*\(http://[0-9.]*:[0-9]*\).*|\1|p' "$@" | head -1)
        [ -n "$url" ] && return
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server did not start: $(cat "$@")" >&2
    exit 1
}
