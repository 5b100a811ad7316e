# One image for both tiers; compose picks the command (api or worker).
FROM oven/bun:1.4.5 AS deps
WORKDIR /app
COPY package.json bun.lock ./
# Driver fixes not yet released upstream; see patches/README.md.
COPY patches ./patches
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4.5
# ffmpeg and ffprobe: the video-transcode worker runs the real ones (contract §9.3).
# fontconfig + fonts-dejavu-core: sharp draws the text watermark with Pango, which finds fonts
# through fontconfig's /etc/fonts; without both every letter was an empty box.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg fontconfig fonts-dejavu-core \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# Local storage (STORAGE_DRIVER=local) writes here; the image runs as `bun`, not root.
ENV DATA_DIR=/app/data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json drizzle.config.ts main.ts ./
COPY api ./api
COPY worker ./worker
COPY db ./db
COPY shared ./shared
COPY cli ./cli
RUN mkdir -p /app/data && chown bun:bun /app/data
USER bun
EXPOSE 3000
# Liveness of the default command (the API); compose gives the worker services their own check
# (worker/healthcheck.ts). The image has no curl: Bun's fetch instead.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["bun", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/healthz`).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# One process per container, as container platforms expect: the API alone (compose runs the
# workers as their own services with start:worker, and migrations as a one-shot db:migrate), not
# the supervisor of `bun run start`, which would hide its children's deaths from the platform.
CMD ["bun", "run", "start:api"]
