// Issuing spec, Authentication rule 2: at least 8 characters with lowercase letters, uppercase letters,
// numbers and symbols. The upper bound keeps argon2 work per request bounded.
export const PASSWORD_MAX_LENGTH = 128;

/** The first rule the password breaks, or undefined when it passes. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 8) return 'must be at least 8 characters';
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (!/[a-z]/.test(password)) return 'must contain a lowercase letter';
  if (!/[A-Z]/.test(password)) return 'must contain an uppercase letter';
  if (!/[0-9]/.test(password)) return 'must contain a number';
  if (!/[^A-Za-z0-9]/.test(password)) return 'must contain a symbol';
  return undefined;
}
