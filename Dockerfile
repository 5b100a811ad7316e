# One image for both tiers; compose picks the command (api or worker).
FROM oven/bun:1.4 AS deps
WORKDIR /app
COPY package.json bun.lock ./
# Driver fixes not yet released upstream; see patches/README.md.
COPY patches ./patches
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4
# The video-transcode worker runs the real ffmpeg and ffprobe (contract §9.3), from the OS packages.
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json drizzle.config.ts main.ts ./
COPY api ./api
COPY worker ./worker
COPY db ./db
COPY shared ./shared
COPY cli ./cli
USER bun
EXPOSE 3000
CMD ["bun", "run", "start"]
