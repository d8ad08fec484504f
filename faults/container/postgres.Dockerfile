# A stand-in for the official postgres:15-bookworm image, for the container test on a
# machine that reaches no container registry: Debian's PostgreSQL 15 on the local Debian
# base, with the official image's user, data folder, variables and entry point behaviour.
FROM warden-test/debian:bookworm-slim
RUN groupadd --system --gid 999 postgres \
 && useradd --system --gid postgres --uid 999 --home-dir /var/lib/postgresql --shell /bin/bash postgres \
 && mkdir -p /var/lib/postgresql /etc/postgresql-common \
 && chown postgres:postgres /var/lib/postgresql \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/lib/postgresql/15/bin PGDATA=/var/lib/postgresql/data
RUN mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 1777 "$PGDATA"
VOLUME /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
