# kafkas3: a static binary on scratch, run as a numeric non-root user.
# docs/operations.md, "Container image", holds the same file.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/kafkas3/kafkas3/cmd.version=${VERSION}" -o /out/kafkas3 . \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/tmp /tmp
COPY --from=build /out/kafkas3 /kafkas3
USER 65532:65532
ENTRYPOINT ["/kafkas3"]
