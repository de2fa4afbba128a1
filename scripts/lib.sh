# Shared helpers for scripts/serve.sh and scripts/test.sh (sourced, not run).
# Each ensure_* function installs one missing tool and skips it when present.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1

TRUNK_VERSION="0.21.14"
export PATH="$HOME/.cargo/bin:$PATH"

banner() {
    printf '\n\033[1;34m==== [%s] %s ====\033[0m\n' "$(date -u +%H:%M:%S)" "$*"
}

die() {
    printf '\033[1;31mERROR: %s\033[0m\n' "$*" >&2
    exit 1
}

# Run as root directly, otherwise through sudo (CI images often run as a user).
as_root() {
    if [ "$(id -u)" = "0" ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

# The wasm-bindgen version the build uses, read from Cargo.lock so the CLI
# always matches the library (a mismatch makes trunk and the test runner fail).
wasm_bindgen_lock_version() {
    awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

ensure_wasm_target() {
    if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
        echo "wasm32-unknown-unknown target: present"
    else
        rustup target add wasm32-unknown-unknown
    fi
}

ensure_rust_components() {
    local missing=()
    cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
    cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
    if [ "${#missing[@]}" -gt 0 ]; then
        rustup component add "${missing[@]}"
    else
        echo "rustfmt, clippy: present"
    fi
}

ensure_trunk() {
    if command -v trunk >/dev/null 2>&1 && trunk --version | grep -q " $TRUNK_VERSION\$"; then
        echo "trunk $TRUNK_VERSION: present"
    else
        echo "installing trunk $TRUNK_VERSION (takes a few minutes)"
        # Its TLS stack (aws-lc-sys, ring) builds C code.
        ensure_apt build-essential pkg-config
        cargo install --locked "trunk@$TRUNK_VERSION"
    fi
}

ensure_wasm_bindgen_cli() {
    local want
    want="$(wasm_bindgen_lock_version)"
    [ -n "$want" ] || die "no wasm-bindgen in Cargo.lock"
    if command -v wasm-bindgen >/dev/null 2>&1 && wasm-bindgen --version | grep -q " $want\$" \
        && command -v wasm-bindgen-test-runner >/dev/null 2>&1; then
        echo "wasm-bindgen-cli $want: present"
    else
        echo "installing wasm-bindgen-cli $want (matches Cargo.lock)"
        ensure_apt build-essential pkg-config
        # Not --locked: the CLI's own lock file pins crates that no longer build on current stable.
        cargo install --force "wasm-bindgen-cli@$want"
    fi
}

APT_UPDATED=0
ensure_apt() {
    local missing=()
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "apt packages present: $*"
        return 0
    fi
    echo "installing apt packages: ${missing[*]}"
    if [ "$APT_UPDATED" = "0" ]; then
        as_root apt-get update -q
        APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

ensure_browser() {
    ensure_apt chromium chromium-driver
}

ensure_npm_deps() {
    if [ -d node_modules/playwright-core ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
        echo "npm dependencies: present"
    else
        npm ci --no-audit --no-fund
    fi
}
