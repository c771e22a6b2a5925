# One image for every part of the product; docker-compose.yml picks the part with its command.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates gcc libc6-dev libseccomp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN npm ci
ENV AIEM_HOST=0.0.0.0 AIEM_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
CMD ["npm", "start"]
