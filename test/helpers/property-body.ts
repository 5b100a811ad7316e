/** A valid property creation body (no test-runner imports: the fault harness uses it too). */
export function propertyBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    operations: ['venta'],
    type: 'apartamento',
    subtype: 'atico',
    title: 'Ático con terraza',
    description: '<p>Luminoso</p>',
    pricing: { sale: 250000 },
    location: {
      city: 'Valencia',
      province: 'Valencia',
      postal_code: '46004',
      address: 'Calle de Colón 12, 3º B',
      full_address: 'Calle de Colón 12, 3º B, 46004 Valencia',
      coordinates: { latitude: 39.46987, longitude: -0.37634 },
      visibility: 'public',
    },
    area: { total: 95, usable: 82 },
    bedrooms: 3,
    bathrooms: 2,
    ...overrides,
  }
}
