// kafkajs over SASL_SSL: `node kafkajs_sasl_ssl.js BOOTSTRAP CA_FILE MECHANISM USER PASSWORD TOPIC`
// produces 20 messages "js-<i>" with acks=all, reads them back in a consumer group, prints JSON
// {"produced": [offsets], "consumed": [values]}. Exits non-zero on any error.
const fs = require("fs");
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, caFile, mechanism, username, password, topic] = process.argv.slice(2);
const kafka = new Kafka({
  clientId: "kafkajs-sasl-ssl",
  brokers: [bootstrap],
  ssl: { ca: [fs.readFileSync(caFile, "utf-8")], servername: "localhost" },
  sasl: { mechanism, username, password },
  logLevel: logLevel.ERROR,
});

async function main() {
  const producer = kafka.producer();
  await producer.connect();
  const produced = [];
  for (let i = 0; i < 20; i++) {
    const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: `js-${i}` }] });
    produced.push(Number(meta.baseOffset));
  }
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const consumed = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out consuming")), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        consumed.push(message.value.toString());
        if (consumed.length === 20) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  console.log(JSON.stringify({ produced, consumed }));
}

main().then(() => process.exit(0), (e) => { console.error(e.stack || String(e)); process.exit(1); });
