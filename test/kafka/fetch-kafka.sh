#!/usr/bin/env bash
# Fetches the jars of an Apache Kafka broker from Maven Central into a cache
# outside the repository and prints the jar directory. Does nothing (but print)
# when that version is already cached.
#   test/kafka/fetch-kafka.sh 4.4.0   ->  ~/.cache/hermod/kafka-4.4.0/jars
# Without a version, the newest the tests run (KAFKA_VERSIONS in
# test/support/kafka-cluster.ts; test/kafka/fetch-kafka.test.ts keeps the two the same).
# HERMOD_KAFKA_CACHE overrides the cache root (default ~/.cache/hermod).
set -euo pipefail
version="${1:-4.4.0}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "fetch-kafka.sh: not a Kafka release version: $version" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${HERMOD_KAFKA_CACHE:-$HOME/.cache/hermod}/kafka-$version"
jars="$cache/jars"
# The marker is written last, so an interrupted download is fetched again.
if [[ -f "$cache/complete" ]]; then
  echo "$jars"
  exit 0
fi
major="${version%%.*}"
profile="kafka4"
if (( major < 4 )); then profile="kafka3"; fi
rm -rf "$jars"
mkdir -p "$jars"
mvn -B -q -f "$here/pom.xml" -P"$profile" -Dkafka.version="$version" -Dkafka.jars="$jars" dependency:copy-dependencies >&2
ls "$jars"/kafka_2.13-"$version".jar >/dev/null
touch "$cache/complete"
echo "$jars"
