# ChemicalGibbsFreeEnergyDifference: two species, the potentials given as numbers
[Models]
  [model]
    type = ChemicalGibbsFreeEnergyDifference
    concentration_differences = 'dx_mg dx_si'
    chemical_potentials = '-1.2e4 3.5e3'
    equilibrium_potentials = '-1.5e4 4.0e3'
  []
[]
