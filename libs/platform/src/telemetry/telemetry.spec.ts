import { startTelemetry, stopTelemetry, telemetryEnabled } from './index';

/** Whether the SDK's module was loaded, and what it was started as. */
const sdk = { loaded: false, started: [] as string[] };
jest.mock('./node-sdk', () => {
  sdk.loaded = true;
  return {
    startNodeSdk: (name: string) => {
      sdk.started.push(name);
      return { shutdown: () => Promise.resolve() };
    },
  };
});

describe('OpenTelemetry switch', () => {
  const saved = { ...process.env };
  afterEach(async () => {
    await stopTelemetry();
    process.env = { ...saved };
  });

  it('is on only when the standard variables ask for traces', () => {
    expect(telemetryEnabled({})).toBe(false);
    expect(telemetryEnabled({ OTEL_SERVICE_NAME: 'catalog' })).toBe(false);
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(
      telemetryEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toBe(true);
    expect(telemetryEnabled({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(
      telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toBe(false);
    expect(
      telemetryEnabled({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_TRACES_EXPORTER: 'none',
      }),
    ).toBe(false);
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });

  it('costs nothing while off: the SDK is not even loaded', () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_TRACES_EXPORTER;
    startTelemetry('catalog-api');
    expect(sdk.loaded).toBe(false);
  });

  it('starts the SDK once, named for the process, when on', () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
    startTelemetry('provisioner-worker');
    startTelemetry('provisioner-worker');
    expect(sdk.loaded).toBe(true);
    expect(sdk.started).toEqual(['provisioner-worker']);
  });
});
