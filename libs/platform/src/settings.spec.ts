import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { loadSettings, parseBoolean, parseInteger, SettingsError } from './settings';

class ExampleSettings {
  @Transform(({ value }) => parseInteger(value))
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 3000;

  @IsUrl({ protocols: ['postgres'], require_tld: false, require_protocol: true })
  DATABASE_URL!: string;

  @Transform(({ value }) => parseBoolean(value))
  @IsBoolean()
  FEATURE_ON = false;

  @IsOptional()
  @IsString()
  @MinLength(8, { message: 'SECRET must be at least 8 characters long' })
  SECRET?: string;
}

class Inner {
  @IsInt()
  size!: number;
}

class WithNested {
  @ValidateNested()
  inner: Inner = Object.assign(new Inner(), { size: 'big' as unknown as number });
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
  throw new Error('expected a SettingsError');
}

describe('loadSettings', () => {
  it('returns typed settings with defaults applied', () => {
    const settings = loadSettings(ExampleSettings, {
      DATABASE_URL: 'postgres://db/x',
      PORT: '8080',
    });
    expect(settings).toBeInstanceOf(ExampleSettings);
    expect(settings.PORT).toBe(8080);
    expect(settings.FEATURE_ON).toBe(false);
    expect(settings.SECRET).toBeUndefined();
  });

  it('lists every problem at once, naming each setting', () => {
    const problems = problemsOf(() =>
      loadSettings(ExampleSettings, { PORT: 'eighty', FEATURE_ON: 'maybe', SECRET: 'short' }),
    );
    const named = new Set(problems.map((problem) => problem.split(' ')[0]));
    expect([...named].sort()).toEqual(['DATABASE_URL', 'FEATURE_ON', 'PORT', 'SECRET']);
    expect(problems).toContain('PORT must be an integer number');
    expect(problems).toContain('DATABASE_URL must be a URL address');
    expect(problems).toContain('FEATURE_ON must be a boolean value');
    expect(problems).toContain('SECRET must be at least 8 characters long');
  });

  it('reports several constraints of one setting separately', () => {
    const problems = problemsOf(() =>
      loadSettings(ExampleSettings, { DATABASE_URL: 'postgres://db/x', PORT: '0' }),
    );
    expect(problems).toEqual(['PORT must not be less than 1']);
    const twice = problemsOf(() =>
      loadSettings(ExampleSettings, { DATABASE_URL: 'postgres://db/x', PORT: '1.5' }),
    );
    expect(twice.length).toBeGreaterThanOrEqual(1);
    expect(twice.every((p) => p.startsWith('PORT '))).toBe(true);
  });

  it('puts the whole list in the error message, one line each', () => {
    try {
      loadSettings(ExampleSettings, { PORT: 'x' });
      throw new Error('expected a SettingsError');
    } catch (error) {
      const message = (error as Error).message;
      expect(message.split('\n')[0]).toBe('Invalid settings:');
      expect(message).toContain('\n  - PORT ');
      expect(message).toContain('\n  - DATABASE_URL ');
      expect((error as Error).name).toBe('SettingsError');
    }
  });

  it('treats empty strings as unset, so defaults apply and required settings are reported missing', () => {
    const settings = loadSettings(ExampleSettings, {
      DATABASE_URL: 'postgres://db/x',
      PORT: '',
      SECRET: '',
    });
    expect(settings.PORT).toBe(3000);
    expect(settings.SECRET).toBeUndefined();
    const problems = problemsOf(() => loadSettings(ExampleSettings, { DATABASE_URL: '' }));
    expect(problems.some((p) => p.startsWith('DATABASE_URL'))).toBe(true);
  });

  it('ignores variables it does not know (the real environment is full of them)', () => {
    expect(() =>
      loadSettings(ExampleSettings, { DATABASE_URL: 'postgres://db/x', PATH: '/bin', HOME: '/' }),
    ).not.toThrow();
  });

  it('prefixes nested settings with their parent', () => {
    const problems = problemsOf(() => loadSettings(WithNested, {}));
    expect(problems).toEqual(['inner.size must be an integer number']);
  });
});

describe('parseBoolean', () => {
  it.each(['true', 'TRUE', '1', 'yes', 'on', ' True '])('reads %p as true', (value) => {
    expect(parseBoolean(value)).toBe(true);
  });

  it.each(['false', 'False', '0', 'no', 'off'])('reads %p as false', (value) => {
    expect(parseBoolean(value)).toBe(false);
  });

  it('leaves anything else for the validator to reject by name', () => {
    expect(parseBoolean('maybe')).toBe('maybe');
    expect(parseBoolean(true)).toBe(true);
    expect(parseBoolean(undefined)).toBeUndefined();
  });
});

describe('parseInteger', () => {
  it('reads decimal integers, signs and surrounding spaces included', () => {
    expect(parseInteger('42')).toBe(42);
    expect(parseInteger(' -7 ')).toBe(-7);
    expect(parseInteger('007')).toBe(7);
  });

  it('leaves anything else for the validator', () => {
    expect(parseInteger('1.5')).toBe('1.5');
    expect(parseInteger('1e3')).toBe('1e3');
    expect(parseInteger('0x10')).toBe('0x10');
    expect(parseInteger('')).toBe('');
    expect(parseInteger(12)).toBe(12);
  });
});
