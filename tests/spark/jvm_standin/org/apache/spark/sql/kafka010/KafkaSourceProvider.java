/*
 * A STAND-IN for Spark's JVM Kafka connector, used only by tests/spark/test_jvm_connector.py. It is NOT
 * spark-sql-kafka-0-10 (whose jar no package registry reachable here ships): it carries the connector's
 * class name, org.apache.spark.sql.kafka010.KafkaSourceProvider, and registers the short name "kafka"
 * through META-INF/services/org.apache.spark.sql.sources.DataSourceRegister, as the real jar does, so
 * Spark's data source lookup and kafkapy's detection see what they would see with the real connector.
 * It reads nothing: resolving a relation fails with MARKER and the options it was given, so a test can
 * tell that format("kafka") reached the JVM.
 */
package org.apache.spark.sql.kafka010;

import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import scala.collection.immutable.Map;

public final class KafkaSourceProvider implements DataSourceRegister, RelationProvider {
    public static final String MARKER = "kafkapy test stand-in for Spark's JVM KafkaSourceProvider";

    @Override
    public String shortName() {
        return "kafka";
    }

    @Override
    public BaseRelation createRelation(SQLContext sqlContext, Map<String, String> parameters) {
        throw new UnsupportedOperationException(MARKER + " resolved format(\"kafka\"), subscribe="
            + parameters.get("subscribe").getOrElse(() -> "?"));
    }
}
