// Apache Kafka's Java client (kafka-clients 3.9.1) against a kafkapy broker, for test_security_java_client.py.
// `token <bootstrap>`: as alice (SASL PLAIN) create a delegation token with renewer User:bob and describe it,
// log in with it (SCRAM-SHA-512, tokenauth=true) and produce/consume 10 records, then try to create a token
// from that token session. `oauth <bootstrap> <sub>`: OAuthBearerLoginModule's unsecured login for <sub>,
// produce/consume 10 records. Prints one `KEY value` line per fact; the test asserts them.
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;

public class JavaSecurityCheck {
    static Properties sasl(String bootstrap, String mechanism, String jaas) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        p.put("sasl.jaas.config", jaas);
        p.put("max.block.ms", "10000");
        p.put("delivery.timeout.ms", "10000");
        p.put("request.timeout.ms", "5000");
        p.put("default.api.timeout.ms", "10000");
        return p;
    }

    static String rootCause(Throwable e) {
        while (e.getCause() != null) e = e.getCause();
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    static void roundtrip(Properties p, String topic) throws Exception {
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 10; i++) producer.send(new ProducerRecord<>(topic, "v" + i)).get();
        }
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = System.currentTimeMillis() + 20000;
            while (got.size() < 10 && System.currentTimeMillis() < end)
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                    got.add(r.offset() + ":" + r.value());
        }
        System.out.println("ROUNDTRIP " + String.join(",", got));
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        if (args[0].equals("token")) {
            Properties alice = sasl(bootstrap, "PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule "
                    + "required username=\"alice\" password=\"alice-secret\";");
            DelegationToken token;
            try (Admin admin = Admin.create(alice)) {
                token = admin.createDelegationToken(new CreateDelegationTokenOptions()
                        .renewers(List.of(new KafkaPrincipal("User", "bob")))).delegationToken().get();
                System.out.println("TOKEN " + token.tokenInfo().tokenId() + " " + token.hmacAsBase64String() + " "
                        + token.tokenInfo().owner() + " " + token.tokenInfo().renewersAsString());
                System.out.println("DESCRIBED " + admin.describeDelegationToken().delegationTokens().get().size());
            }
            Properties byToken = sasl(bootstrap, "SCRAM-SHA-512", "org.apache.kafka.common.security.scram."
                    + "ScramLoginModule required username=\"" + token.tokenInfo().tokenId() + "\" password=\""
                    + token.hmacAsBase64String() + "\" tokenauth=\"true\";");
            roundtrip(byToken, "java-token");
            try (Admin admin = Admin.create(byToken)) {
                admin.createDelegationToken().delegationToken().get();
                System.out.println("TOKEN_SESSION_CREATE allowed");
            } catch (Exception e) {
                System.out.println("TOKEN_SESSION_CREATE " + rootCause(e));
            }
        } else {
            Properties p = sasl(bootstrap, "OAUTHBEARER", "org.apache.kafka.common.security.oauthbearer."
                    + "OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"" + args[2] + "\";");
            try {
                roundtrip(p, "java-oauth");
            } catch (Exception e) {
                System.out.println("FAILED " + rootCause(e));
            }
        }
    }
}
