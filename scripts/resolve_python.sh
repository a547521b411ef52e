# Sourced by the smoke scripts. resolve_python VERSION: "3.10", "3.13" … → the interpreter pyenv
# installed for it (its full path), else the version itself (uv then finds or fetches one); a
# path is returned as it is.
resolve_python() {
  local want="$1" root candidate
  root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for candidate in "$root"/versions/"$want".*/bin/python"$want"; do
    if [ -x "$candidate" ]; then echo "$candidate"; return; fi
  done
  echo "$want"
}
