# `curl -f` as the quick starts use it, except that a refused request also prints the answer's body (to
# stderr, so a failing page says why): the pages stay short, their failures readable.
curl() {
  local args=() x
  for x in "$@"; do
    [[ $x == -fsS ]] && x=-sS
    args+=("$x")
  done
  local out code
  out=$(command curl -w '\n%{http_code}' "${args[@]}") || return $?
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  if ((code >= 400)); then
    echo "HTTP $code: $out" >&2
    return 22
  fi
  printf '%s\n' "$out"
}
