import { ValidateBy, ValidationArguments } from 'class-validator';

export interface HostPort {
  host: string;
  port: number;
}

const ENTRY = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5})$/;

/** `host:port, host:port, [::1]:port` as a list; null when any entry is not one. */
export function parseHostPortList(value: string): HostPort[] | null {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const parsed = entries.map((entry) => {
    const match = ENTRY.exec(entry);
    const port = Number(match?.[3]);
    return match && port >= 1 && port <= 65535 ? { host: match[1] ?? match[2], port } : null;
  });
  return parsed.length > 0 && parsed.every((p) => p !== null) ? (parsed as HostPort[]) : null;
}

/** A comma list of host:port (REDIS_SENTINELS, REDIS_CLUSTER_NODES). */
export function IsHostPortList(): PropertyDecorator {
  return ValidateBy({
    name: 'isHostPortList',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && parseHostPortList(value) !== null,
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'setting'} must be a comma list of host:port (a port 1-65535; an IPv6 address in brackets)`,
    },
  });
}

/** The ways to reach the queue's Redis, in the order a conflict is reported. */
const TOPOLOGIES = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'];

/**
 * At most one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES: each setting reports the
 * ones before it, so a conflict is named once.
 */
export function OneRedisTopology(): PropertyDecorator {
  const earlier = (args: ValidationArguments) => {
    const settings = args.object as Record<string, unknown>;
    return TOPOLOGIES.slice(0, TOPOLOGIES.indexOf(args.property)).filter(
      (name) => settings[name] !== undefined,
    );
  };
  return ValidateBy({
    name: 'oneRedisTopology',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => earlier(args!).length === 0,
      defaultMessage: (args?: ValidationArguments) =>
        `${args!.property} cannot be combined with ${earlier(args!).join(' or ')}: set one way to reach Redis`,
    },
  });
}

/** A setting read only beside one of `settings` (a Sentinel password without Sentinels...). */
export function OnlyWith(...settings: string[]): PropertyDecorator {
  return ValidateBy({
    name: 'onlyWith',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) =>
        settings.some((name) => (args!.object as Record<string, unknown>)[name] !== undefined),
      defaultMessage: (args?: ValidationArguments) =>
        `${args!.property} is only read with ${settings.join(' or ')}, which is not set`,
    },
  });
}
