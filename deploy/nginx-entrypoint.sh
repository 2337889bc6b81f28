#!/bin/sh
# Entrypoint of the nginx image (Dockerfile, "nginx" stage). POSIX sh: the base image may be alpine.
#
# nginx resolves the web service at request time (a recreated web container gets a new address),
# which needs a `resolver` naming a DNS server. The right one is whatever this container was given
# in /etc/resolv.conf: Docker's embedded DNS, podman's aardvark-dns, the cluster DNS of Kubernetes.
# This writes it, with the web service's address, to the file deploy/nginx.conf includes, then
# runs the command (through the base image's own entrypoint when it has one).
#
#   NGINX_WEB_UPSTREAM  host:port of gunicorn (default web:8000). nginx's resolver ignores the
#                       search domains of resolv.conf: under Kubernetes give the full name,
#                       e.g. web.vidqa.svc.cluster.local:8000.
set -eu

resolv_conf="${VIDQA_RESOLV_CONF:-/etc/resolv.conf}"
out="${VIDQA_NGINX_RESOLVER_CONF:-/etc/nginx/conf.d/vidqa-resolver.inc}"
upstream="${NGINX_WEB_UPSTREAM:-web:8000}"

nameservers=""
while read -r key value _ || [ -n "${key:-}" ]; do
  if [ "$key" = nameserver ] && [ -n "$value" ]; then
    case "$value" in
      *:*) value="[${value%%\%*}]" ;;  # IPv6: nginx wants brackets, and takes no zone (%eth0)
    esac
    nameservers="$nameservers $value"
  fi
  key=""
done < "$resolv_conf"

if [ -z "$nameservers" ]; then
  echo "nginx-entrypoint: $resolv_conf names no nameserver; nginx could not find the web service" >&2
  exit 78  # EX_CONFIG
fi

cat > "$out" <<CONF
# Written by $0 at container start from $resolv_conf.
resolver$nameservers valid=10s ipv6=off;
map \$host \$django_upstream { default http://$upstream; }
CONF

if [ -x /docker-entrypoint.sh ]; then
  exec /docker-entrypoint.sh "$@"
fi
exec "$@"
