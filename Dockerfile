# simkit in a slim image: the tool built with the Swift standard library and Foundation
# linked in (`--static-swift-stdlib`), copied into Debian without any Swift runtime.
#
#   docker build -t your-registry/simkit:0.2.0 .
#   docker run --rm your-registry/simkit:0.2.0 fuzz --seeds 10000
#
# The build stage's image must match the toolchain SimKit is built with (Swift 6.3) and
# the runtime stage's Debian release (bookworm: the binary needs its glibc). A test
# (`Tests/ScenariosTests/PackagingTests.swift`) builds the same binary the same way and
# checks that `ldd` lists no Swift library and that it runs with an empty environment.
ARG SWIFT_IMAGE=swift:6.3-bookworm

FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product simkit \
 && install -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/simkit" /usr/local/bin/simkit

FROM debian:bookworm-slim
COPY --from=build /usr/local/bin/simkit /usr/local/bin/simkit
# It links only libc, libm, libstdc++ and libgcc_s, which the slim image has: prove it runs.
RUN simkit --version
# Runs as a plain user; results go to the working directory or to a mounted volume.
RUN useradd --create-home --uid 10001 simkit
USER simkit
WORKDIR /home/simkit
ENTRYPOINT ["simkit"]
CMD ["--help"]
