/**
 * What `/metrics` shows, in Prometheus' text format: requests by route and
 * status, their latency, and what the hub's requests did (sends, deliveries,
 * wakes), counted from the audit rows the bus writes for them.
 */
import type { AuditRow } from '../../audit/record.js';

/** Latency buckets in seconds: a loopback call takes about a millisecond, a long wait up to a minute. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export class HubMetrics {
  private readonly requests = new Map<string, number>();
  private readonly latency = new Map<string, Histogram>();
  private readonly tokenRequests = new Map<string, number>();
  private readonly operations = { send: 0, deliver: 0, wake: 0 };
  /** Requests that wait for something (a long-poll), open now. */
  waitsOpen = 0;
  /** Requests being answered right now, this scrape among them; the hub says how many. */
  requestsInFlight: () => number = () => 0;

  request(route: string, status: number, seconds: number): void {
    const key = `${route}\u0000${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    let histogram = this.latency.get(route);
    if (histogram === undefined) {
      histogram = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(route, histogram);
    }
    for (let index = 0; index < BUCKETS.length; index++) if (seconds <= (BUCKETS[index] as number)) histogram.counts[index] = (histogram.counts[index] as number) + 1;
    histogram.sum += seconds;
    histogram.count++;
  }

  tokenUsed(tokenId: string): void {
    this.tokenRequests.set(tokenId, (this.tokenRequests.get(tokenId) ?? 0) + 1);
  }

  /** Count what the audit log records: each sent copy, each message handed to a reader, each wake. */
  rows(rows: readonly AuditRow[]): void {
    for (const row of rows) {
      if (row.op === 'send') this.operations.send++;
      else if (row.op === 'read') this.operations.deliver++;
      else if (row.op === 'wake') this.operations.wake++;
    }
  }

  render(): string {
    const lines: string[] = [];
    lines.push('# HELP agent_bus_http_requests_total Requests the hub answered, by route and status.', '# TYPE agent_bus_http_requests_total counter');
    for (const [key, count] of [...this.requests].sort()) {
      const [route, status] = key.split('\u0000') as [string, string];
      lines.push(`agent_bus_http_requests_total{route="${label(route)}",status="${status}"} ${count}`);
    }
    lines.push('# HELP agent_bus_http_request_duration_seconds How long the hub took to answer, by route.', '# TYPE agent_bus_http_request_duration_seconds histogram');
    for (const [route, histogram] of [...this.latency].sort()) {
      BUCKETS.forEach((bound, index) => lines.push(`agent_bus_http_request_duration_seconds_bucket{route="${label(route)}",le="${bound}"} ${histogram.counts[index]}`));
      lines.push(`agent_bus_http_request_duration_seconds_bucket{route="${label(route)}",le="+Inf"} ${histogram.count}`);
      lines.push(`agent_bus_http_request_duration_seconds_sum{route="${label(route)}"} ${histogram.sum}`);
      lines.push(`agent_bus_http_request_duration_seconds_count{route="${label(route)}"} ${histogram.count}`);
    }
    lines.push('# HELP agent_bus_sends_total Messages sent through this hub (one per recipient copy).', '# TYPE agent_bus_sends_total counter', `agent_bus_sends_total ${this.operations.send}`);
    lines.push('# HELP agent_bus_deliveries_total Messages this hub handed to their readers.', '# TYPE agent_bus_deliveries_total counter', `agent_bus_deliveries_total ${this.operations.deliver}`);
    lines.push('# HELP agent_bus_wakes_total Wakes this hub fired for idle recipients.', '# TYPE agent_bus_wakes_total counter', `agent_bus_wakes_total ${this.operations.wake}`);
    lines.push('# HELP agent_bus_http_requests_in_flight Requests the hub is answering right now, this one among them.', '# TYPE agent_bus_http_requests_in_flight gauge', `agent_bus_http_requests_in_flight ${this.requestsInFlight()}`);
    lines.push('# HELP agent_bus_waits_open Requests waiting for mail right now.', '# TYPE agent_bus_waits_open gauge', `agent_bus_waits_open ${this.waitsOpen}`);
    lines.push('# HELP agent_bus_token_requests_total Authenticated requests, by token id.', '# TYPE agent_bus_token_requests_total counter');
    for (const [tokenId, count] of [...this.tokenRequests].sort()) lines.push(`agent_bus_token_requests_total{token_id="${label(tokenId)}"} ${count}`);
    lines.push('# HELP agent_bus_tokens_used Tokens that made a request since the hub started.', '# TYPE agent_bus_tokens_used gauge', `agent_bus_tokens_used ${this.tokenRequests.size}`);
    return `${lines.join('\n')}\n`;
  }
}
