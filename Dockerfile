# The service image: Node 26, the compiled service and its production dependencies only.
# Build stages compile with the dev dependencies; the final stage gets none of them, no bench/,
# no tests and no TypeScript sources, and runs as the unprivileged `node` user.
ARG NODE_IMAGE=node:26-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are here; it is run below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# tsconfig.build.json also compiles bench/, kit/ and scripts/ when they are present; they are not copied, so only src/ is built.
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# PGlite's default DATA_DIR (./data), writable by the service's user; mount a volume here to keep it.
RUN mkdir data && chown node:node data
USER node
EXPOSE 3000
# No curl in slim images: Node's own fetch asks /healthz on the port the service listens on.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as PID 1 (not npm), so SIGTERM reaches the service and it drains.
CMD ["node", "dist/src/main/web.js"]
