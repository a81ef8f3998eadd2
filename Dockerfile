# menu-server container image: a static-stdlib release build on Swift's Debian 12 image, run on
# Debian 12 slim with only libmicrohttpd, hiredis (the Redis session store), nettle (admin tokens),
# the IANA time zone database (opening hours' "timeZone") and their needs.
#   docker build -t menu-server .
#   docker run -p 8080:8080 menu-server                      # Config/menu.json, sessions in memory
#   docker run -p 8080:8080 -v menu-data:/data -e MENU_DATA_DIR=/data menu-server
#   docker run -p 8080:8080 -e MENU_STORE=redis://redis:6379 menu-server   # sessions shared in Redis

FROM swift:6.3-bookworm AS build
# Debian 12's package versions change with its security updates; pinning them would break builds.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libhiredis-dev nettle-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# The browser page's files, compiled into the binary (target WebAssets).
COPY Web ./Web
RUN swift build -c release --product menu-server --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/menu-server" /out/menu-server

FROM debian:bookworm-slim
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libhiredis0.14 libnettle8 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app menu \
    && mkdir -p /data && chown menu /data
WORKDIR /app
COPY --from=build /out/menu-server /usr/local/bin/menu-server
COPY Config ./Config
USER 10001
ENV MENU_HOST=0.0.0.0 \
    MENU_PORT=8080 \
    MENU_CONFIG=/app/Config/menu.json
EXPOSE 8080
# `menu-server healthcheck` reads the same MENU_* settings as the server (so it follows MENU_PORT)
# and asks GET /healthz on loopback: nothing else is needed in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s CMD ["menu-server", "healthcheck"]
# SIGTERM drains requests in flight and exits 0. SIGHUP (`docker kill -s HUP CONTAINER`) reloads
# MENU_CONFIG; mount Config as a ConfigMap and set MENU_WATCH_CONFIG=yes to reload on its updates.
STOPSIGNAL SIGTERM
ENTRYPOINT ["menu-server"]
