#!/bin/sh
# fake-ssh - stands in for ssh in tests/opat-remote.t: runs the command
# here, as ssh to a host would, and logs the host and its input lines.
# Hosts: "alien" reports another soc_version, "dead" never answers, and
# "flaky" answers its first $FAKE_SSH_FLAKY sessions, then drops out.
dir=${FAKE_SSH_DIR:?}
while [ $# -gt 0 ]; do
	case $1 in
	-o|-l|-p|-i) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
host=$1
shift
[ "${1-}" = "--" ] && shift
echo "$host" >> "$dir/sessions"
case $host in
dead) exit 255 ;;
alien) export AOE_SOC_VERSION=alien_soc ;;
flaky)
	n=$(grep -c '^flaky$' "$dir/sessions")
	[ "$n" -le "${FAKE_SSH_FLAKY:-0}" ] || exit 255 ;;
esac
# sshd gives the remote side the user's login shell as SHELL, which GNU
# parallel's remote wrapper runs the job with; CI's environment has none.
SHELL=$(getent passwd "$(id -un)" | cut -d: -f7)
export SHELL="${SHELL:-/bin/sh}"
# FAKE_SSH_PLAIN: the remote shell's PATH is a plain system's.
[ -z "${FAKE_SSH_PLAIN-}" ] || PATH=/usr/bin:/bin
tee -a "$dir/in.$host" | sh -c "$*"
