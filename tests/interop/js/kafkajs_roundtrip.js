#!/usr/bin/env node
// kafkajs round trip against a Kafka broker, run by tests/interop/test_kafkajs.py:
//   node kafkajs_roundtrip.js HOST:PORT TOPIC
// admin createTopics (3 partitions) -> producer sends 1,000 keyed messages with headers in 10 batches
// (batch 3 gzip-compressed) -> a group consumer reads them all back -> admin fetchTopicOffsets and
// fetchOffsets for the group -> deleteTopics. Prints one JSON summary line on stdout; kafkajs' own log
// goes to stderr. Exits non-zero on any error and after DEADLINE_MS whatever happens.
'use strict'

const crypto = require('crypto')
const { Kafka, CompressionTypes, logLevel } = require('kafkajs')

const DEADLINE_MS = 60000
const N = 1000
const BATCHES = 10
const GZIP_BATCH = 3
const PARTITIONS = 3

const [bootstrap, topic] = process.argv.slice(2)
if (!bootstrap || !topic) {
  console.error('usage: kafkajs_roundtrip.js HOST:PORT TOPIC')
  process.exit(64)
}
const groupId = `${topic}-group`

setTimeout(() => {
  console.error(`kafkajs_roundtrip: timed out after ${DEADLINE_MS} ms`)
  process.exit(3)
}, DEADLINE_MS)

const stderrLog = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`[kafkajs ${label} ${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

const kafka = new Kafka({
  clientId: 'kafkapy-interop',
  brokers: [bootstrap],
  logLevel: logLevel.WARN,
  logCreator: stderrLog,
  retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 }
})

// The line digested per consumed message; the test rebuilds the same lines from the sent messages.
const line = (offset, key, value, headers) => {
  const names = Object.keys(headers).sort()
  const hs = names.map((k) => `${k}=${headers[k] === null ? '<null>' : headers[k].toString()}`).join(',')
  return `${offset}|${key}|${value}|${hs}\n`
}

const message = (i) => ({
  key: `key-${i}`,
  value: `value-${i}|`.repeat(1 + (i % 5)),
  headers: { seq: String(i), origin: 'kafkajs' }
})

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
    waitForLeaders: true,
    timeout: 10000
  })
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
  const leaders = metadata.topics[0].partitions
    .map((p) => [p.partitionId, p.leader])
    .sort((a, b) => a[0] - b[0])

  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const produced = {} // partition -> {count, baseOffsets}
  const perBatch = N / BATCHES
  for (let b = 0; b < BATCHES; b++) {
    const messages = []
    for (let i = b * perBatch; i < (b + 1) * perBatch; i++) messages.push(message(i))
    const result = await producer.send({
      topic,
      messages,
      acks: -1,
      compression: b === GZIP_BATCH ? CompressionTypes.GZIP : CompressionTypes.None
    })
    for (const r of result) {
      if (r.errorCode !== 0) throw new Error(`produce error ${JSON.stringify(r)}`)
      const p = (produced[r.partition] ||= { baseOffsets: [] })
      p.baseOffsets.push(Number(r.baseOffset))
    }
  }
  await producer.disconnect()

  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const consumed = {} // partition -> {offsets, hash}
  let total = 0
  let done
  const allRead = new Promise((resolve) => { done = resolve })
  await consumer.run({
    autoCommit: true,
    eachMessage: async ({ partition, message: m }) => {
      const c = (consumed[partition] ||= { offsets: [], hash: crypto.createHash('sha256') })
      const headers = {}
      for (const [k, v] of Object.entries(m.headers || {})) headers[k] = v
      c.offsets.push(Number(m.offset))
      c.hash.update(line(m.offset, m.key.toString(), m.value.toString(), headers))
      total += 1
      if (total === N) done()
    }
  })
  await allRead
  await consumer.disconnect() // commits the resolved offsets of the last batch

  const topicOffsets = (await admin.fetchTopicOffsets(topic))
    .map((p) => ({ partition: p.partition, low: Number(p.low), high: Number(p.high), offset: Number(p.offset) }))
    .sort((a, b) => a.partition - b.partition)
  const groupOffsets = (await admin.fetchOffsets({ groupId, topics: [topic] }))
    .flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: Number(p.offset) })))
    .sort((a, b) => a.partition - b.partition)
  await admin.deleteTopics({ topics: [topic], timeout: 10000 })
  const remaining = (await admin.listTopics()).filter((t) => t === topic)
  await admin.disconnect()

  const partitions = {}
  for (const p of Object.keys(consumed).sort()) {
    const c = consumed[p]
    partitions[p] = {
      count: c.offsets.length,
      first: c.offsets[0],
      last: c.offsets[c.offsets.length - 1],
      contiguous: c.offsets.every((o, i) => o === i),
      digest: c.hash.digest('hex'),
      baseOffsets: (produced[p] || { baseOffsets: [] }).baseOffsets
    }
  }
  return {
    created,
    leaders,
    consumedTotal: total,
    partitions,
    topicOffsets,
    groupOffsets,
    topicRemainsAfterDelete: remaining.length > 0
  }
}

main().then(
  (summary) => {
    process.stdout.write(JSON.stringify(summary) + '\n', () => process.exit(0))
  },
  (err) => {
    console.error(`kafkajs_roundtrip: ${err && err.stack ? err.stack : err}`)
    process.exit(1)
  }
)
