#!/bin/sh
# As nginx-unprivileged's 20-envsubst-on-templates.sh: each /etc/nginx/templates/NAME.template
# becomes /etc/nginx/conf.d/NAME, with only the environment's variables replaced.
set -eu
defined=$(env | cut -d= -f1 | sed 's/.*/${&}/' | tr '\n' ' ')
for template in /etc/nginx/templates/*.template; do
  [ -f "$template" ] || continue
  envsubst "$defined" < "$template" > "/etc/nginx/conf.d/$(basename "$template" .template)"
done
exec "$@"
