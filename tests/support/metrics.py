"""Reading the Prometheus text that a metrics port serves."""

import http.client
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families


def scrape(port: int, path: str = "/metrics") -> Counter:
    """{(sample name, sorted labels): value} from the text the metrics port serves."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status == 200
        assert response.getheader("Content-Type").startswith("text/plain")
        text = response.read().decode()
    finally:
        connection.close()
    samples = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples
