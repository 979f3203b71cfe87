"""The dotted class paths that logging configurations name for Kafka's layout and its hourly roll: one definition
for the built-in default (logging_config.py) and the log4j.properties translation (log4j_properties.py).
No byte format; constants only, thread-safe."""

DAILY_HANDLER_CLASS = "kafkapy.cli.daily_rolling_file_handler.DailyRollingFileHandler"
FORMATTER_CLASS = "kafkapy.cli.logging_config.KafkaLogFormatter"
