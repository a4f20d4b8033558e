#!/usr/bin/env bash
# Installs the Debian 12 packages yirage needs (only those missing; safe to re-run),
# configures and builds in build/, then runs yirage-plan on a bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git   # toolchain
  python3 python3-jsonschema                         # the step runners' CPU checks (bench/); the JSON schema test
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev    # input files, command line, JSON
  libeigen3-dev libsimgrid-dev                       # calibration fits, network simulation
  libgtest-dev libgmock-dev                          # tests
  clang libclang-rt-dev                              # libFuzzer targets (scripts/fuzz.sh)
  clang-format clang-tidy                            # the format and lint tests
  hipcc libamdhip64-dev                              # HIP kernels compile in the tests (gfx90a)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev  # yirage-gui (Charts needs Qt6 OpenGL; SVG export)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages are installed"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"

# The main job on a bundled example: the best training layouts of Llama 3 70B on four nodes
# of eight H100.
./build/cli/yirage-plan data/clusters/h100-4x8-rail.yaml data/tasks/llama3-70b-train.yaml --top 5
