# One image for every role: `npm start` (all-in-one), `npm run api`, `npm run runner`.
FROM node:24-bookworm
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
COPY scripts ./scripts
# the install step brings Debian's ffmpeg and the fallback fonts (as root, through apt)
RUN npm ci --omit=dev
ENV HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 8080
CMD ["npm", "start"]
