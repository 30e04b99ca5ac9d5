#!/usr/bin/env bash
# reports-page-probe.sh URL SECONDS
#   asks URL (a reportdb or PuppetDB) for the first reports page with its
#   total (order_by end_time desc, limit 100, include_total) every 200 ms
#   for SECONDS, one line per request on stdout: its start time (UTC,
#   HH:MM:SS.mmm), HTTP status (000: no answer) and seconds taken.
# reports-page-probe.sh --summary FILE
#   summarises such a file: requests, non-200, p50, p99 and max latency.
# Used by retention-under-load.sh.
set -euo pipefail
if [[ ${1:-} == --summary ]]; then
  awk '{n++; if ($2 != "200") bad++; t[n]=$3*1000} END {
    asort(t); printf "requests %d, non-200 %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", n, bad, t[int(n*0.5)+1], t[int(n*0.99)+1], t[n] }' "${2:?file}"
  exit
fi
url=${1:?url}; secs=${2:?seconds}
end=$(( $(date +%s) + secs ))
while (( $(date +%s) < end )); do
  printf '%s ' "$(date -u +%T.%3N)"
  curl -s -o /dev/null -w "%{http_code} %{time_total}\n" -G "$url/pdb/query/v4/reports" \
    --data-urlencode 'order_by=[{"field":"end_time","order":"desc"}]' --data-urlencode limit=100 \
    --data-urlencode include_total=true || echo "000 0"
  sleep 0.2
done
