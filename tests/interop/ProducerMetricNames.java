// Prints every metric of Apache Kafka's Java producer (kafka-clients) after sending 10 records:
// `group:name:{tags} = value`, the names ToolsUtils.printMetrics prints for producer-perf-test --print-metrics.
// Usage: java ProducerMetricNames <bootstrap> <topic>   (tests/interop/test_producer_perf_metrics.py)
import java.util.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;

public class ProducerMetricNames {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        p.put("client.id", "perf-producer-client");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 10; i++) producer.send(new ProducerRecord<>(args[1], new byte[10]));
            producer.flush();
            TreeMap<String, Object> out = new TreeMap<>();
            for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
                MetricName n = e.getKey();
                out.put(n.group() + ":" + n.name() + ":" + n.tags(), e.getValue().metricValue());
            }
            for (Map.Entry<String, Object> e : out.entrySet()) System.out.println(e.getKey() + " = " + e.getValue());
        }
    }
}
