#!/usr/bin/env bash
# Test support, not part of `cargo test`: render the SVG files of `reconbound train --fil`
# (histogram and image grid, grey MNIST and RGB CIFAR-10-format images) to PNG with the first
# renderer available (rsvg-convert, inkscape, or python3 with cairosvg), to check that they
# display. The Rust tests check well-formedness and structure; this checks a real renderer
# accepts the files. Usage: bash tests/cli/render_fil_svgs.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-target/fil-render}"
mkdir -p "$out"

cargo build --release --quiet --bin reconbound
bin=target/release/reconbound

render() { # svg png
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o "$2" "$1"
  elif command -v inkscape >/dev/null; then
    inkscape "$1" --export-type=png --export-filename="$2" >/dev/null 2>&1
  elif python3 -c 'import cairosvg' 2>/dev/null; then
    python3 -c 'import sys, cairosvg; cairosvg.svg2png(url=sys.argv[1], write_to=sys.argv[2])' "$1" "$2"
  else
    return 2
  fi
}

# Grey MNIST images (embedded data, mlp).
"$bin" train --model mlp --train-size 64 --test-size 100 --steps 3 --batch-size 16 --quiet \
  --fil --fil-coords 4 --plot "$out/mnist-hist.svg" --fil-images "$out/mnist-images.svg" >/dev/null

# RGB images: a synthetic CIFAR-10 binary batch (label byte + 3072 CHW bytes per record):
# record i is a colour gradient, red along x, green along y, blue = 16·i.
python3 - "$out/synthetic-cifar.bin" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(80):
        red = bytes((8 * x) % 256 for y in range(32) for x in range(32))
        green = bytes((8 * y) % 256 for y in range(32) for x in range(32))
        blue = bytes([(16 * i) % 256] * 1024)
        f.write(bytes([i % 10]) + red + green + blue)
EOF
"$bin" train --model cifar-convnet --data "$out/synthetic-cifar.bin" --train-size 64 --test-size 16 \
  --steps 2 --batch-size 16 --quiet --fil --fil-coords 4 \
  --plot "$out/cifar-hist.svg" --fil-images "$out/cifar-images.svg" >/dev/null

status=0
for svg in "$out"/*.svg; do
  png="${svg%.svg}.png"
  if render "$svg" "$png"; then
    echo "rendered $svg -> $png ($(wc -c <"$png") bytes)"
  elif [ $? -eq 2 ]; then
    echo "skipped: no SVG renderer (rsvg-convert, inkscape, python3 cairosvg) on this machine"
    exit 0
  else
    echo "FAILED to render $svg"
    status=1
  fi
done
exit $status
