#!/bin/sh
# Usage: compile_fixture.sh LOG COMMAND...
# Runs COMMAND (a neml2-compile of one test fixture), passes its output through, and keeps
# its standard output in LOG when it compiled something: python/tests/conftest.py reuses
# the fixture's artifacts and checks the progress lines they were made with. A run that
# found everything up to date leaves the log of the compile that made the artifacts.
log=$1
shift
"$@" > "$log.new"
status=$?
cat "$log.new"
if grep -q ' to compile (' "$log.new"; then
  mv "$log.new" "$log"
else
  rm -f "$log.new"
fi
exit $status
