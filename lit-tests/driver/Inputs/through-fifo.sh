#!/bin/sh
# through-fifo.sh FIFO COPY CMD...: make the FIFO, run CMD while a background `cat`
# copies what is written into the FIFO to COPY; exit with CMD's status.
# (lit's internal shell has no `&`.)
fifo=$1
copy=$2
shift 2
rm -f "$fifo" "$copy"
mkfifo "$fifo" || exit 2
cat "$fifo" > "$copy" &
reader=$!
"$@"
status=$?
# If CMD never opened the FIFO (say it failed), the reader still waits in open():
# opening the FIFO read-write never blocks and lets it see end of file. A FIFO that
# CMD replaced cannot be reached any more: its reader is stopped (the test fails on
# `test -p` anyway).
if [ -p "$fifo" ]; then
  exec 3<>"$fifo"
  exec 3>&-
else
  kill $reader 2>/dev/null
fi
wait $reader
exit $status
