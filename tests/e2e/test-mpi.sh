#!/bin/bash
# test-mpi.sh BN_MPI - an MPI job under hunch (tests/targets/bn_mpi.c,
# built by mpicc; Debian's OpenMPI): `hunch run -- mpirun -np 4 BN_MPI`.
# Skipped, with the reason, when BN_MPI is empty (mpicc not installed:
# ./dev.sh installs openmpi-bin and libopenmpi-dev).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
bn_mpi=$1
if [ -z "$bn_mpi" ] || ! command -v mpirun >/dev/null; then
	echo "1..0 # SKIP mpicc or mpirun not installed (Debian packages openmpi-bin libopenmpi-dev; ./dev.sh build installs them)"
	exit 0
fi
tap_done
