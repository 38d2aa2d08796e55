# One image for every role: all-in-one (the default command), api and runner (packages/server/src/bin/*.ts).
# The base image is a build argument, so an image built locally (e.g. a debootstrapped bookworm with
# nodejs and npm installed, `docker import`ed) serves where no registry is reachable:
#   docker build --network host --build-arg BASE_IMAGE=bookworm-node:local -t pic2video .
# The service runs on the Node pinned in package.json (installed into node_modules by `npm ci`), so
# the base image's own node only has to run npm.
ARG BASE_IMAGE=node:24-bookworm
FROM ${BASE_IMAGE}
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
COPY scripts ./scripts
# the install step brings Debian's ffmpeg and the fallback fonts (as root, through apt); without the
# dev dependencies it installs none of the test tools (Chromium, Prometheus)
RUN npm ci --omit=dev
ENV HOST=0.0.0.0 DATA_DIR=/data PATH=/app/node_modules/.bin:$PATH
EXPOSE 8080
# Run it under an init that reaps (`docker run --init`; the compose file sets `init: true`): a runner
# killed mid-render leaves an exited ffmpeg for PID 1 to reap (docs/operations.md). node itself (the
# one in node_modules/.bin, first on PATH), not `npm start`: npm writes lines of its own on stdout,
# which break LOG_FORMAT=json. `docker run … node packages/server/src/bin/api.ts` (or runner.ts) for the other roles.
CMD ["node", "packages/server/src/bin/start.ts"]
