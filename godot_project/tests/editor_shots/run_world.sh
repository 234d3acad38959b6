#!/usr/bin/env bash
# The IslandWorld in the real editor (the inspector's map, a world island picked on it and
# shown read-only: OUTDIR/inspector_world.png, inspector_world_island.png), under Xvfb with
# Mesa's lavapipe.
#   godot_project/tests/editor_shots/run_world.sh OUTDIR
# (see world_shot_plugin.gd for what it does and prints). Needs the extension
# built and copied into the addon (`cargo xtask build`). The project is copied to a temporary
# folder with this driver plugin enabled, so the repository's project.godot is never changed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
project="$(cd "$here/../.." && pwd)"
outdir="$(realpath -m "$1")"; mkdir -p "$outdir"
tmp="$(mktemp -d /tmp/island_editor_shot.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/addons/shot"
cp "$project/project.godot" "$project/icon.svg" "$tmp/"
# A copy, not a link: a rebuild (`cargo xtask build` rewrites bin/) during the long run must not
# change the library under the running editor.
cp -r "$project/addons/procedural_island" "$tmp/addons/procedural_island"
cp "$here/world_shot_plugin.gd" "$tmp/addons/shot/"
sed 's#script="shot_plugin.gd"#script="world_shot_plugin.gd"#' "$here/plugin.cfg" > "$tmp/addons/shot/plugin.cfg"
cp "$here/world_shot_scene.tscn" "$tmp/world_shot_scene.tscn"
printf '\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/procedural_island/plugin.cfg", "res://addons/shot/plugin.cfg")\n' >> "$tmp/project.godot"
godot_cmd="${GODOT:-$(cd "$project/.." && cargo xtask godot-path 2>/dev/null | tail -1)}"
export VK_ICD_FILENAMES="${VK_ICD_FILENAMES:-$(ls /usr/share/vulkan/icd.d/lvp_icd*.json | head -1)}"
# Import once headless (icons, scripts), then run the editor on a virtual screen.
timeout 300 $godot_cmd --headless --path "$tmp" --import >/dev/null 2>&1 || true
xvfb-run -a -s "-screen 0 1600x900x24" $godot_cmd --editor --path "$tmp" \
  --rendering-driver vulkan --resolution 1600x900 --position 0,0 -- --outdir="$outdir" 2>&1 \
  | grep --line-buffered -E "SHOT|ERROR|SCRIPT ERROR|Procedural Island" || true
