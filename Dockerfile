# syntax=docker/dockerfile:1
# Tessera in a container: `docker build -t tessera .` then
# `docker run -p 8080:8080 -v tessera-data:/data tessera` (the embedded Postgres keeps its data in the
# volume), or `docker compose up` for Tessera on Postgres 17 (compose.yaml).

# The server compiled to JavaScript (`npm run build`: packages/server/dist), with the dev dependencies
# that compiling needs; none of them reaches the image.
FROM node:20.19-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY packages/server/package.json packages/server/package.json
COPY packages/sdk/package.json packages/sdk/package.json
RUN npm ci --no-audit --no-fund
COPY packages/server packages/server
RUN npm run build

# Production dependencies, resolved once from the lockfile.
FROM node:20.19-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/server/package.json packages/server/package.json
COPY packages/sdk/package.json packages/sdk/package.json
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20.19-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TESSERA_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY packages/sdk packages/sdk
COPY packages/server/package.json packages/server/package.json
COPY packages/server/migrations packages/server/migrations
COPY --from=build /app/packages/server/dist packages/server/dist
# The guides the landing page links (/docs/guides/…)
COPY docs docs
# Postgres refuses to run as root: the image runs as the unprivileged `node` user, owning its volume.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Plain JavaScript: no TypeScript compiled at start (a checkout's `npm start` runs the sources through tsx)
CMD ["node", "packages/server/dist/main.js", "serve"]
