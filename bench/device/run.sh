#!/usr/bin/env bash
# The GPU check, run on the device machine (no Node, no network) from the folder
# bench/device/build-bundle.sh made (.device/, carried with the call):
#
#   bash .device/run.sh                 # results in $OUT (at most 8 files), else ./device-out
#
# 1. unpack Node, qmd (dist + runtime node_modules + tools) and the Vulkan build; unpack the
#    Vulkan loader and glvnd .debs (into / with ldconfig on the device, as root; into a private
#    folder on LD_LIBRARY_PATH otherwise) and point Vulkan at the NVIDIA driver's ICD;
# 2. probe: `qmd status --json` under --gpu vulkan, auto, cuda and off (backend, devices, VRAM,
#    the fallback line), and an independent Vulkan device count (python ctypes, when there is a
#    python3);
# 3. crash rounds with the product's own --gpu (tools/crash.mjs): EOF and SIGTERM with each kind
#    of call in flight, Ctrl-C of qmd embed (within CRASH_S, default 200 s);
# 4. throughput, qmd beside raw node-llama-cpp (tools/llm-throughput.mjs): the big generated
#    models on the GPU and on the CPU (every core), and a thread sweep on the CPU (tiny models);
# 5. summary.md with every figure. Budget: TOTAL_S (default 440 s of the call's 480); a section
#    that would not fit is skipped and said to be.
# Knobs: DRY_RUN=1 (small counts and tiny models: the CPU-only rehearsal), CRASH_GPU (vulkan),
#   CC_EOF CC_TERM CC_INT CC_PARALLEL (30 10 10 4), SWEEP_THREADS, TOTAL_S, WORK.
set -uo pipefail
T0=$(date +%s)
HERE=${BUNDLE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
W=${WORK:-/tmp/qmd-gpu-check}
rm -rf "$W" && mkdir -p "$W"
LOG=$OUT/run.log SUM=$OUT/summary.md STATUS=$OUT/status.txt TPUT=$OUT/throughput.md
exec > >(tee -a "$LOG") 2>&1
el() { echo $(($(date +%s) - T0)); }
say() { echo "== [$(el)s] $*"; }
sum() { echo "$*" >>"$SUM"; }
left() { echo $((${TOTAL_S:-440} - $(el))); }
: >"$SUM"
: >"$STATUS"
DRY=${DRY_RUN:-0}
sum "# qmd GPU check, $(date -u +%FT%TZ), $(hostname)$([ "$DRY" = 1 ] && echo ' (DRY RUN: small counts, tiny models)')"
sum ""

say "unpack into $W"
xz -dc "$HERE/node.xz" >"$W/node" && chmod +x "$W/node"
xz -dc "$HERE/qmd.tar.xz" | tar -x -C "$W"
xz -dc "$HERE/vulkan.tar.xz" | tar -x -C "$W"
NODE=$W/node Q=$W/qmd QMD=$W/qmd/dist/qmd.mjs
"$NODE" --version || {
  sum "FATAL: the carried Node does not run"
  exit 1
}
say "unpacked: $(du -sh "$W" | cut -f1)"

say "host"
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)
FLAGS=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile)$' | tr '\n' ' ')
sum "- host: $CPU, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; CPU flags: $FLAGS"
export PATH=$PATH:/usr/local/nvidia/bin
if command -v nvidia-smi >/dev/null; then
  sum "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2 | tr '\n' ';')"
else
  sum "- GPU: no nvidia-smi here"
fi

say "Vulkan loader and glvnd"
NV=/usr/local/nvidia
if [ "$DRY" != 1 ] && [ "$(id -u)" = 0 ] && [ -d "$NV" ]; then
  for deb in "$HERE"/debs/*.deb; do dpkg -x "$deb" /; done
  ldconfig
  VKL="unpacked into / (dpkg -x, ldconfig)"
else
  for deb in "$HERE"/debs/*.deb; do dpkg -x "$deb" "$W/vkroot"; done
  export LD_LIBRARY_PATH=$W/vkroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  VKL="unpacked into $W/vkroot (LD_LIBRARY_PATH)"
fi
[ -d "$NV/lib64" ] && export LD_LIBRARY_PATH=$NV/lib64:$NV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ICD=$(ls "$NV"/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1)
if [ -n "$ICD" ]; then export VK_ICD_FILENAMES=$ICD VK_DRIVER_FILES=$ICD; fi
[ -f "$NV/share/glvnd/egl_vendor.d/10_nvidia.json" ] &&
  export __EGL_VENDOR_LIBRARY_FILENAMES=$NV/share/glvnd/egl_vendor.d/10_nvidia.json
sum "- Vulkan loader: $VKL; ICD: ${ICD:-none found}"
if command -v python3 >/dev/null; then
  VKCOUNT=$(timeout 30 python3 - <<'PY' 2>&1
import ctypes, sys
try:
    vk = ctypes.CDLL("libvulkan.so.1")
except OSError as e:
    print("no loader:", e); sys.exit(0)
class App(ctypes.Structure):
    _fields_ = [("sType", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("name", ctypes.c_char_p), ("v", ctypes.c_uint32),
                ("engine", ctypes.c_char_p), ("ev", ctypes.c_uint32), ("api", ctypes.c_uint32)]
class Info(ctypes.Structure):
    _fields_ = [("sType", ctypes.c_uint32), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32), ("app", ctypes.POINTER(App)),
                ("nl", ctypes.c_uint32), ("l", ctypes.c_void_p), ("ne", ctypes.c_uint32), ("e", ctypes.c_void_p)]
app = App(0, None, b"qmd", 1, b"none", 1, (1 << 22) | (2 << 12))
inst = ctypes.c_void_p()
rc = vk.vkCreateInstance(ctypes.byref(Info(1, None, 0, ctypes.pointer(app), 0, None, 0, None)), None, ctypes.byref(inst))
if rc != 0:
    print("vkCreateInstance failed, rc", rc); sys.exit(0)
n = ctypes.c_uint32(0)
vk.vkEnumeratePhysicalDevices(inst, ctypes.byref(n), None)
print(n.value, "device(s)")
PY
  )
  sum "- Vulkan through the loader alone (python ctypes): $VKCOUNT"
fi

say "probe: qmd status under each --gpu"
mkdir -p "$W/probe-notes" && printf '# Probe\n\nA note.\n' >"$W/probe-notes/a.md"
export XDG_CACHE_HOME=$W/cache XDG_CONFIG_HOME=$W/config
PROBE_ENV=(QMD_INDEX="$W/probe.sqlite" QMD_RERANK_MODEL=off QMD_EXPAND_MODEL=off)
env "${PROBE_ENV[@]}" "$NODE" "$QMD" collection add "$W/probe-notes" --name probe >/dev/null
sum ""
sum "## Backend probe (\`qmd --gpu X status --json\`)"
sum ""
sum "| --gpu | backend | devices | VRAM total / free | stderr line | seconds |"
sum "|---|---|---|---|---|---|"
for gpu in vulkan auto cuda off; do
  t=$(date +%s%N)
  env "${PROBE_ENV[@]}" timeout 120 "$NODE" "$QMD" --gpu "$gpu" status --json >"$W/probe-$gpu.json" 2>"$W/probe-$gpu.err"
  rc=$?
  ms=$((($(date +%s%N) - t) / 1000000))
  secs=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
  { echo "### --gpu $gpu (exit $rc, ${secs} s)"; cat "$W/probe-$gpu.err"; "$NODE" -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(JSON.stringify(r.models, null, 1));
    ' "$W/probe-$gpu.json" 2>&1; echo; } >>"$STATUS"
  row=$("$NODE" -e '
    const fs = require("fs");
    let m = {}; try { m = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).models ?? {}; } catch {}
    const b = m.backend ?? {}; const g = (x) => x === undefined ? "-" : (x / 2 ** 30).toFixed(1) + " GiB";
    const err = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => l.slice(0, 160)).join("<br>") || "-";
    console.log(`${b.gpu ?? "failed"} | ${(b.devices ?? []).join(", ") || "-"} | ${g(m.vram?.total)} / ${g(m.vram?.free)} | ${err.replace(/\|/g, "/")}`);
  ' "$W/probe-$gpu.json" "$W/probe-$gpu.err")
  sum "| $gpu | $row | $secs |"
  [ "$gpu" = vulkan ] && VK_BACKEND=$(echo "$row" | cut -d'|' -f1 | xargs)
done
say "vulkan backend: ${VK_BACKEND:-?}"

say "models"
"$NODE" "$Q/tools/gen-models.mjs" "$W/models" $([ "$DRY" = 1 ] && echo --tiny) | tail -7
mkdir -p "$W/tiny-models"
for m in embed rerank generate; do ln -sf "$W/models/tiny-$m.gguf" "$W/tiny-models/$m.gguf"; done

say "crash rounds"
sum ""
sum "## Crash rounds (\`qmd mcp\` with the three models; \`qmd embed\`; QMD_GPU=${CRASH_GPU:-vulkan})"
sum ""
if [ "$DRY" = 1 ]; then
  export CC_EOF=${CC_EOF:-3} CC_TERM=${CC_TERM:-2} CC_INT=${CC_INT:-2} CC_PARALLEL=${CC_PARALLEL:-2} CC_NOTES=${CC_NOTES:-20}
  MODELS=$W/tiny-models
else
  MODELS=$W/models
fi
# First (the must-have: 0 native crashes), within its own budget; throughput gets the rest.
CRASH_S=$((${CRASH_S:-200} < $(left) - 20 ? ${CRASH_S:-200} : $(left) - 20))
if [ "$CRASH_S" -lt 60 ]; then
  sum "SKIPPED: $(left) s left of the budget"
else
  (cd "$Q" && QMD_GPU=${CRASH_GPU:-vulkan} CC_DEADLINE_S=$((CRASH_S - 30)) timeout -k 10 "$CRASH_S" \
    "$NODE" tools/crash.mjs "$QMD" "$MODELS" "$W/crash" "$OUT/crash-rounds.jsonl")
  sum "- tools/crash.mjs exit $?"
  [ -f "$OUT/crash-rounds-summary.md" ] && cat "$OUT/crash-rounds-summary.md" >>"$SUM" && rm -f "$OUT/crash-rounds-summary.md"
  grep -h '"native":true' "$OUT/crash-rounds.jsonl" 2>/dev/null | head -5 | cut -c1-600 | sed 's/^/    /' >>"$SUM"
fi

TPUT_ARGS=(--rounds 3)
sum ""
sum "## Throughput: qmd beside raw node-llama-cpp (same file, context, batch, threads; best of alternating rounds)"
sum ""
: >"$TPUT"
throughput() { # LABEL BUDGET_S ARGS...
  local label=$1 budget=$2
  shift 2
  if [ "$(left)" -lt "$budget" ]; then
    sum "- $label: SKIPPED, $(left) s left of the budget"
    return
  fi
  say "throughput: $label"
  (cd "$Q" && timeout -k 5 "$budget" "$NODE" tools/llm-throughput.mjs "$@" --out "$W/t.md") || sum "- $label: exit $?"
  if [ -f "$W/t.md" ]; then
    { echo "### $label"; cat "$W/t.md"; } >>"$TPUT"
    sum "### $label"
    sum ""
    grep '^|' "$W/t.md" >>"$SUM"
    sum ""
    rm -f "$W/t.md"
  fi
}
NPROC=$(nproc)
if [ "$DRY" = 1 ]; then
  # One thread: more on a busy small CPU measure the wait for descheduled threads (design.md §5).
  throughput "GPU (vulkan), tiny models" 150 --models tiny --dir "$W/tiny-models" --gpu vulkan --threads 1 --rounds 2 --chunks 10 --docs 6 --expansions 1
  throughput "CPU, tiny models" 150 --models tiny --dir "$W/tiny-models" --gpu off --threads 1 --rounds 2 --chunks 10 --docs 6 --expansions 1
else
  throughput "GPU (vulkan), big models" 90 --models big --dir "$W/models" --gpu vulkan --threads "$NPROC" --chunks 24 --docs 24 --expansions 2
  throughput "CPU ($NPROC threads), big models" 70 --models big --dir "$W/models" --gpu off --threads "$NPROC" --rounds 2 --chunks 3 --docs 3 --kinds embedding,ranking
  throughput "CPU thread sweep, tiny models" 60 --models tiny --dir "$W/tiny-models" --gpu off --threads "${SWEEP_THREADS:-1,2,4,8,$NPROC}" --rounds 2 --chunks 30 --docs 15 --expansions 1
fi

sum ""
sum "Total $(el) s. Files: $(ls "$OUT" | tr '\n' ' ')"
say "done in $(el) s"
echo
cat "$SUM"
