# ChemicalGibbsFreeEnergyDifference: a variable gives one chemical potential and one
# equilibrium potential (entry by entry), the output renamed
[Models]
  [model]
    type = ChemicalGibbsFreeEnergyDifference
    concentration_differences = 'dx_a dx_b'
    chemical_potentials = 'mu_a 2.5e3'
    equilibrium_potentials = '-7.0e3 mu_b_eq'
    chemical_gibbs_free_energy = 'dG_chem'
  []
[]
